import Foundation
import NetworkAgent
import NetworkAgentDiskCache
import NetworkAgentTestServer
import NetworkAgentTestSupport
import NetworkAgentTesting
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Heuristic freshness from `Last-Modified` (RFC 9111 §4.2.2) over the wire: only for the statuses RFC 9110 §15.1
/// calls heuristically cacheable (206 aside: this cache stores no partial content), or with `public`.
@Suite struct HeuristicFreshnessTests {
    /// Modified ten days before the response: 10 % of that, one day (the default cap), of heuristic freshness.
    func origin(status: Int, cacheControl: String? = nil) throws -> CacheHarness {
        try CacheHarness { _, now in
            .cached(
                "status \(status)",
                status: status,
                at: now,
                [("Last-Modified", httpDate(now.addingTimeInterval(-864_000)))]
                    + (cacheControl.map { [("Cache-Control", $0)] } ?? [])
            )
        }
    }

    @Test(arguments: [200, 203, 204, 300, 301, 308, 404, 405, 410, 414, 501])
    func aHeuristicallyCacheableStatusIsFreshForAFractionOfItsAge(_ status: Int) async throws {
        let cache = try origin(status: status)
        _ = try await cache.send()
        cache.clock.advance(by: .seconds(3_600))
        #expect(try await cache.send().status == .hit)
        #expect(cache.requestCount == 1)
    }

    @Test(arguments: [302, 307, 400, 403, 500, 503])
    func otherStatusesGetNoHeuristicFreshness(_ status: Int) async throws {
        let cache = try origin(status: status)
        _ = try await cache.send()
        #expect(try await cache.send().status != .hit)
        #expect(cache.requestCount == 2)
    }

    @Test func publicMakesAnyStoredStatusHeuristicallyFresh() async throws {
        let cache = try origin(status: 403, cacheControl: "public")
        _ = try await cache.send()
        cache.clock.advance(by: .seconds(3_600))
        #expect(try await cache.send().status == .hit)
        #expect(cache.requestCount == 1)
    }
}
