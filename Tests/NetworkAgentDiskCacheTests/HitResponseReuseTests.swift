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

/// Answers from the store with the same URL, status, fields, `Age` second and cache status share one (immutable)
/// `HTTPURLResponse`; any difference in those gives a response of its own, with its own values.
@Suite struct HitResponseReuseTests {
    private static func harness() throws -> CacheHarness {
        try CacheHarness { request, now in
            .cached("body of \(request.path)", at: now, [("Cache-Control", "max-age=60"), ("ETag", "\"e\"")])
        }
    }

    @Test func identicalHitsShareTheirResponse() async throws {
        let cache = try Self.harness()
        _ = try await cache.send()
        let first = try await cache.send()
        let second = try await cache.send()
        #expect(first.status == .hit)
        #expect(second.status == .hit)
        #expect(first.response === second.response)
        #expect(second.body == "body of /resource")
        #expect(cache.requestCount == 1)
    }

    @Test func anotherAgeSecondGetsItsOwnResponse() async throws {
        let cache = try Self.harness()
        _ = try await cache.send()
        let first = try await cache.send()
        cache.clock.advance(by: .seconds(1))
        let later = try await cache.send()
        #expect(first.header("Age") == "0")
        #expect(later.header("Age") == "1")
        #expect(first.response !== later.response)
        // Within a second (the `Age` is whole seconds), the response is the same again.
        cache.clock.advance(by: .milliseconds(400))
        let sameSecond = try await cache.send()
        #expect(sameSecond.header("Age") == "1")
        #expect(sameSecond.response === later.response)
    }

    @Test func anotherURLGetsItsOwnResponse() async throws {
        let cache = try Self.harness()
        _ = try await cache.send("/a")
        _ = try await cache.send("/b")
        let a = try await cache.send("/a")
        let b = try await cache.send("/b")
        #expect(a.status == .hit)
        #expect(b.status == .hit)
        #expect(a.response !== b.response)
        #expect(a.response.url?.path == "/a")
        #expect(b.response.url?.path == "/b")
        #expect(a.body == "body of /a")
        #expect(b.body == "body of /b")
    }

    @Test func anotherCacheStatusOrStatusCodeGetsItsOwnResponse() async throws {
        let cache = try Self.harness()
        _ = try await cache.send()
        cache.clock.advance(by: .seconds(70))
        // Stale now: answered as `stale` under max-stale, then revalidated by a 304.
        let stale = try await cache.send(headers: ["Cache-Control": "max-stale=3600"])
        #expect(stale.status == .stale)
        cache.respond { _, now in ServerResponse(status: 304, headers: [("Date", httpDate(now)), ("ETag", "\"e\"")]) }
        let revalidated = try await cache.send()
        #expect(revalidated.status == .revalidated)
        let hit = try await cache.send()
        #expect(hit.status == .hit)
        #expect(stale.response !== hit.response)
        #expect(revalidated.response !== hit.response)
        #expect(stale.response !== revalidated.response)

        // The same path answered with another status code once stored: a response of its own.
        cache.respond { _, now in .cached("other", status: 203, at: now, [("Cache-Control", "max-age=60")]) }
        _ = try await cache.send("/other")
        let other = try await cache.send("/other")
        #expect(other.status == .hit)
        #expect(other.response.statusCode == 203)
        #expect(other.response !== hit.response)
    }
}
