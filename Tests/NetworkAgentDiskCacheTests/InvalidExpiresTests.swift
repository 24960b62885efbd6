import Foundation
import NetworkAgent
import NetworkAgentTestServer
import NetworkAgentTestSupport
import NetworkAgentTesting
import Testing

@testable import NetworkAgentDiskCache

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// An `Expires` that is no valid HTTP-date is already expired (RFC 9111 §5.3, issue 27); the parser's grammar
/// (RFC 9110 §5.6.7) takes single spaces between the parts.
@Suite struct InvalidExpiresTests: PolicyFixture {
    // MARK: §5.3 Expires, RFC 9110 §5.6.7 HTTP-date

    @Test func anExpiresWithRunsOfSpacesIsAlreadyExpired() {
        let valid = entry(["Date": httpDate(at(0)), "Expires": "Thu, 18 Aug 2050 02:01:18 GMT"])
        #expect(policy.freshnessLifetime(of: valid) > 0)
        let doubled = entry(["Date": httpDate(at(0)), "Expires": "Thu, 18  Aug  2050 02:01:18 GMT"])
        #expect(policy.freshnessLifetime(of: doubled) == 0)
        #expect(policy.decide(doubled, request: CacheControl(), now: at(0)) == .fetch)
    }

    /// The separators of the grammar are single spaces; only asctime's one-digit day takes a second one.
    @Test(arguments: [
        "Thu, 18  Aug  2050 02:01:18 GMT",
        "Thu,  18 Aug 2050 02:01:18 GMT",
        "Thu, 18 Aug 2050  02:01:18 GMT",
        "Thu, 18 Aug 2050 02:01:18  GMT",
        "Thu, 18\tAug 2050 02:01:18 GMT",
        "Thursday,  18-Aug-50 02:01:18 GMT",
        "Thu Aug   8 02:01:18 2050",
        "Thu Aug 18  02:01:18 2050",
        "Thu  Aug 18 02:01:18 2050",
        "Thu Aug 8 02:01:18 2050",
        "Thu Aug  18 02:01:18 2050",
    ])
    func runsOfWhitespaceInsideADateAreRefused(_ text: String) {
        #expect(HTTPDate.parse(text, now: at(0)) == nil)
    }

    @Test(arguments: [
        "Thu, 18 Aug 2050 02:01:18 GMT", " Thu, 18 Aug 2050 02:01:18 GMT\t", "Thursday, 18-Aug-50 02:01:18 GMT",
        "Thu Aug 18 02:01:18 2050",
    ])
    func singleSpacedDatesAndSurroundingWhitespaceStillParse(_ text: String) {
        #expect(HTTPDate.parse(text, now: at(0))?.timeIntervalSince1970 == 2_544_400_878)
    }

    @Test func asctimeKeepsItsSpacePaddedDay() {
        #expect(HTTPDate.parse("Mon Aug  8 02:01:18 2050", now: at(0))?.timeIntervalSince1970 == 2_543_536_878)
    }

    // MARK: §5.3 Expires

    @Test func anExpiresWithDoubleSpacesIsAlreadyExpired() async throws {
        let cache = try CacheHarness { _, now in
            .cached("expires", at: now, [("Expires", "Thu, 18  Aug  2050 02:01:18 GMT")])
        }
        _ = try await cache.send()
        let second = try await cache.send()
        #expect(second.status == .miss)
        #expect(cache.requestCount == 2)
    }

    @Test func aSingleSpacedExpiresInTheFutureIsFresh() async throws {
        let cache = try CacheHarness { _, now in
            .cached("expires", at: now, [("Expires", "Thu, 18 Aug 2050 02:01:18 GMT")])
        }
        _ = try await cache.send()
        #expect(try await cache.send().status == .hit)
        #expect(cache.requestCount == 1)
    }
}
