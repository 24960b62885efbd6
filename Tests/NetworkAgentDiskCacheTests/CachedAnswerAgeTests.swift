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

/// Every answer built from the store carries an `Age` (RFC 9111 §5.1), replacing the one the origin sent: a hit, a
/// revalidated answer (whose age restarts with the 304), a `max-stale` answer and a `stale-if-error` answer.
@Suite struct CachedAnswerAgeTests {
    @Test func everyAnswerFromTheStoreCarriesItsAge() async throws {
        let cache = try CacheHarness(
            configure: { $0.offlineFallback = .seconds(3_600) },
            handler: { _, now in
                .cached("aged", at: now, [("Cache-Control", "max-age=60"), ("ETag", "\"g\""), ("Age", "5")])
            }
        )
        let miss = try await cache.send()
        #expect(miss.status == .miss)
        #expect(miss.header("Age") == "5")
        cache.clock.advance(by: .seconds(10))
        let hit = try await cache.send()
        #expect(hit.status == .hit)
        #expect(hit.header("Age") == "15")
        cache.clock.advance(by: .seconds(60))
        let stale = try await cache.send(headers: ["Cache-Control": "max-stale=3600"])
        #expect(stale.status == .stale)
        #expect(stale.header("Age") == "75")
        cache.respond { _, now in ServerResponse(status: 304, headers: [("Date", httpDate(now)), ("ETag", "\"g\"")]) }
        let revalidated = try await cache.send()
        #expect(revalidated.status == .revalidated)
        #expect(revalidated.header("Age") == "0")
        cache.clock.advance(by: .seconds(100))
        cache.respond { _, _ in .text("down", status: 503) }
        let fallback = try await cache.send()
        #expect(fallback.status == .stale)
        #expect(fallback.body == "aged")
        #expect(fallback.header("Age") == "100")
    }
}
