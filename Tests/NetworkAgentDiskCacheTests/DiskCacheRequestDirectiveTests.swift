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

/// The request's `Cache-Control` directives over the wire (RFC 9111 §5.2.1).
@Suite struct DiskCacheRequestDirectiveTests {
    /// An origin whose responses are fresh for 100 s and carry an ETag it confirms with 304.
    static func origin() throws -> CacheHarness {
        try CacheHarness { request, now in
            if request.header("If-None-Match") == "\"t\"" {
                return ServerResponse(status: 304, headers: [("Date", httpDate(now)), ("ETag", "\"t\"")])
            }
            return .cached("text", at: now, [("Cache-Control", "max-age=100"), ("ETag", "\"t\"")])
        }
    }

    @Test func maxAgeRefusesAnOlderStoredResponse() async throws {
        let cache = try Self.origin()
        _ = try await cache.send()
        cache.clock.advance(by: .seconds(30))
        #expect(try await cache.send(headers: ["Cache-Control": "max-age=40"]).status == .hit)
        let validated = try await cache.send(headers: ["Cache-Control": "max-age=20"])
        #expect(validated.status == .revalidated)
        #expect(cache.requestCount == 2)
        #expect(cache.server.requests.last?.header("If-None-Match") == "\"t\"")
    }

    @Test func maxAgeZeroAlwaysValidates() async throws {
        let cache = try Self.origin()
        _ = try await cache.send()
        #expect(try await cache.send(headers: ["Cache-Control": "max-age=0"]).status == .revalidated)
        #expect(cache.requestCount == 2)
    }

    @Test func maxStaleAcceptsAStaleResponseWithinItsLimit() async throws {
        let cache = try Self.origin()
        _ = try await cache.send()
        cache.clock.advance(by: .seconds(130))
        let stale = try await cache.send(headers: ["Cache-Control": "max-stale=60"])
        #expect(stale.status == .stale)
        #expect(stale.body == "text")
        #expect(stale.header("Age") == "130")
        #expect(cache.requestCount == 1)
        #expect(try await cache.send(headers: ["Cache-Control": "max-stale=10"]).status == .revalidated)
        #expect(cache.requestCount == 2)
    }

    @Test func maxStaleWithoutAValueAcceptsAnyStaleness() async throws {
        let cache = try Self.origin()
        _ = try await cache.send()
        cache.clock.advance(by: .seconds(86_400 * 365))
        #expect(try await cache.send(headers: ["Cache-Control": "max-stale"]).status == .stale)
        #expect(cache.requestCount == 1)
    }

    @Test func minFreshWantsThatMuchFreshnessLeft() async throws {
        let cache = try Self.origin()
        _ = try await cache.send()
        cache.clock.advance(by: .seconds(50))
        #expect(try await cache.send(headers: ["Cache-Control": "min-fresh=40"]).status == .hit)
        #expect(try await cache.send(headers: ["Cache-Control": "min-fresh=60"]).status == .revalidated)
        #expect(cache.requestCount == 2)
    }

    @Test func onlyIfCachedWithNothingStoredIs504WithoutTheNetwork() async throws {
        let cache = try Self.origin()
        let answer = try await cache.send(headers: ["Cache-Control": "only-if-cached"])
        #expect(answer.response.statusCode == 504)
        #expect(answer.status == .miss)
        #expect(answer.body.isEmpty)
        #expect(cache.requestCount == 0)
    }

    @Test func onlyIfCachedIsAnsweredFromAFreshEntryAndRefusesAStaleOne() async throws {
        let cache = try Self.origin()
        _ = try await cache.send()
        #expect(try await cache.send(headers: ["Cache-Control": "only-if-cached"]).status == .hit)
        cache.clock.advance(by: .seconds(200))
        let stale = try await cache.send(headers: ["Cache-Control": "only-if-cached"])
        #expect(stale.response.statusCode == 504)
        let accepted = try await cache.send(headers: ["Cache-Control": "only-if-cached, max-stale"])
        #expect(accepted.status == .stale)
        #expect(accepted.body == "text")
        #expect(cache.requestCount == 1)
    }

    @Test func noCacheValidatesEvenAFreshResponse() async throws {
        let cache = try Self.origin()
        _ = try await cache.send()
        let reloaded = try await cache.send(headers: ["Cache-Control": "no-cache"])
        #expect(reloaded.status == .revalidated)
        #expect(cache.requestCount == 2)
        #expect(cache.server.requests.last?.header("If-None-Match") == "\"t\"")
    }

    @Test func pragmaNoCacheCountsWhenThereIsNoCacheControl() async throws {
        let cache = try Self.origin()
        _ = try await cache.send()
        #expect(try await cache.send(headers: ["Pragma": "no-cache"]).status == .revalidated)
        #expect(cache.requestCount == 2)
    }

    @Test func noStoreKeepsTheResponseOutOfTheStore() async throws {
        let cache = try Self.origin()
        let first = try await cache.send(headers: ["Cache-Control": "no-store"])
        #expect(first.status == .miss)
        #expect(cache.plugin.stats.entryCount == 0)
        _ = try await cache.send()
        #expect(cache.requestCount == 2)
        #expect(cache.plugin.stats.entryCount == 1)
    }

    /// Requests with their own validators pass through, ranges too when they are conditional (`If-Range`); plain
    /// ranges are answered from the store (RangeServingTests).
    @Test func requestsWithTheirOwnValidatorsOrRangesPassThrough() async throws {
        let cache = try Self.origin()
        _ = try await cache.send()
        let conditional = try await cache.send(headers: ["If-None-Match": "\"t\""])
        #expect(conditional.response.statusCode == 304)
        #expect(conditional.status == nil)
        let range = try await cache.send(headers: ["Range": "bytes=0-1", "If-Range": "\"t\""])
        #expect(range.status == nil)
        #expect(cache.requestCount == 3)
    }
}
