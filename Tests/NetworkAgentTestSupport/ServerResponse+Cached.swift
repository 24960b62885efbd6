import Foundation
import NetworkAgentTestServer
import NetworkAgentTesting

extension ServerResponse {
    /// A text response with a `Date` header at `date` (a virtual time in the cache tests) and the given header
    /// fields.
    ///
    /// - Parameters:
    ///   - text: The body.
    ///   - status: The status, 200 by default.
    ///   - date: The `Date` header's time.
    ///   - headers: More header fields, sent after `Date`.
    /// - Returns: The response.
    public static func cached(
        _ text: String,
        status: Int = 200,
        at date: Date,
        _ headers: [(name: String, value: String)] = []
    ) -> ServerResponse {
        .text(text, status: status, headers: [("Date", httpDate(date))] + headers)
    }
}

extension ManualClock {
    /// 2023-11-14T22:13:20Z: the fixed start of the cache tests' clock, so HTTP dates in tests are exact.
    public static let cacheStart = Date(timeIntervalSince1970: 1_700_000_000)
}
