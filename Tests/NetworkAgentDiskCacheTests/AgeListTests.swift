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

/// A list-based or invalid `Age` (RFC 9111 §5.1, issue 27): the policy's age, and over the wire through
/// `DiskCachePlugin`.
@Suite struct AgeListTests: PolicyFixture {
    // MARK: §5.1 Age

    /// `Age: 7200, 0` on one line, or two `Age` lines the transport joined: the first member counts.
    @Test(arguments: ["7200, 0", "7200,0", "7200 , 5", " 7200"])
    func aListBasedAgeCountsItsFirstMember(_ age: String) {
        let stored = entry(["Date": httpDate(at(0)), "Cache-Control": "max-age=3600", "Age": age])
        #expect(policy.currentAge(of: stored, now: at(0)) == 7200)
        #expect(policy.decide(stored, request: CacheControl(), now: at(0)) == .fetch)
    }

    /// §5.1: a first member that is no non-negative integer is ignored ("a cache SHOULD ignore the field"): the age
    /// comes from `Date` and the response time alone, as without `Age`.
    @Test(arguments: ["abc", "-5", "1.5", "", "100a", ", 7200"])
    func anInvalidAgeIsIgnored(_ age: String) {
        let stored = entry(["Date": httpDate(at(-30)), "Cache-Control": "max-age=3600", "Age": age])
        #expect(policy.currentAge(of: stored, now: at(10)) == 40)
    }

    // MARK: §5.1 Age

    /// One `Age` line holding a list, or two lines the transport joins: the first member, 7200 s, is older than
    /// `max-age=3600`, so the response is stale on arrival and the next request goes to the origin.
    @Test(arguments: [[("Age", "7200, 0")], [("Age", "7200"), ("Age", "0")]])
    func aListBasedAgeMakesTheResponseStale(_ age: [(name: String, value: String)]) async throws {
        let cache = try CacheHarness { _, now in
            .cached("aged", at: now, [("Cache-Control", "max-age=3600"), ("ETag", "\"a\"")] + age)
        }
        _ = try await cache.send()
        let second = try await cache.send()
        #expect(second.status != .hit)
        #expect(cache.requestCount == 2)
        #expect(cache.server.requests.last?.header("If-None-Match") == "\"a\"")
    }
}
