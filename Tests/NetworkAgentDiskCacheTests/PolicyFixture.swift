import Foundation

@testable import NetworkAgentDiskCache

/// What the suites of the RFC 9111 decision share: a fixed start, the default heuristic, and hand-made stored
/// entries at offsets from that start.
protocol PolicyFixture {}

extension PolicyFixture {
    /// The moment every offset counts from.
    static var base: Date { Date(timeIntervalSince1970: 1_700_000_000) }

    /// The policy under test: a 10 % heuristic, at most a day, no offline fallback.
    var policy: CachePolicy {
        CachePolicy(heuristicFraction: 0.1, maximumHeuristicLifetime: 86_400, offlineFallback: 0)
    }

    /// A stored response of `http://h/` with `headers`, requested and received at the offsets given.
    func entry(
        status: Int = 200,
        _ headers: [String: String],
        requestAt: TimeInterval? = nil,
        responseAt: TimeInterval = 0,
        varyNames: [String] = []
    ) -> CachedEntry {
        CachedEntry(
            key: CacheKey(method: "GET", url: "http://h/", credential: "", varyNames: varyNames, variant: ""),
            responseURL: URL(fileURLWithPath: "/"),
            statusCode: status,
            headers: headers,
            body: Data(),
            requestDate: Self.base.addingTimeInterval(requestAt ?? responseAt),
            responseDate: Self.base.addingTimeInterval(responseAt)
        )
    }

    /// The moment `seconds` after ``base``.
    func at(_ seconds: TimeInterval) -> Date { Self.base.addingTimeInterval(seconds) }
}
