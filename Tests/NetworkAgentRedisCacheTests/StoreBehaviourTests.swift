import Foundation
import NetworkAgent
import NetworkAgentDiskCache
import NetworkAgentRedisCache
import NetworkAgentTestServer
import NetworkAgentTestSupport
import NetworkAgentTesting
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The cache's behaviour over the wire, on the disk store and on the Redis store alike: freshness, validation,
/// Vary, stale-while-revalidate, stale-if-error, what is never stored, and keying by credential. (The disk cache's
/// own suite covers the rest on the disk store.)
@Suite(.enabled(if: RedisTestServer.isAvailable, RedisTestServer.skipReason))
struct StoreBehaviourTests {
    @Test(arguments: StoreKind.allCases)
    func aFreshResponseIsAHitAndAStaleOneWithoutValidatorIsFetchedAgain(_ kind: StoreKind) async throws {
        let cache = try CacheHarness(kind) { _, now in .cached("v1", at: now, [("Cache-Control", "max-age=60")]) }
        #expect(try await cache.send().status == .miss)
        let hit = try await cache.send()
        #expect(hit.status == .hit)
        #expect(hit.body == "v1")
        #expect(cache.requestCount == 1)
        cache.clock.advance(by: .seconds(61))
        #expect(try await cache.send().status == .miss)
        #expect(cache.requestCount == 2)
    }

    @Test(arguments: StoreKind.allCases)
    func aStaleResponseWithAnETagIsRevalidatedWithA304(_ kind: StoreKind) async throws {
        let cache = try CacheHarness(kind) { request, now in
            request.header("If-None-Match") == "\"1\""
                ? ServerResponse(status: 304, headers: [("Date", httpDate(now)), ("Cache-Control", "max-age=60")])
                : .cached("body", at: now, [("Cache-Control", "max-age=60"), ("ETag", "\"1\"")])
        }
        _ = try await cache.send()
        cache.clock.advance(by: .seconds(90))
        let revalidated = try await cache.send()
        #expect(revalidated.status == .revalidated)
        #expect(revalidated.body == "body")
        // The merged entry is fresh again.
        #expect(try await cache.send().status == .hit)
        #expect(cache.requestCount == 2)
    }

    @Test(arguments: StoreKind.allCases)
    func varyKeepsOneVariantPerHeaderValue(_ kind: StoreKind) async throws {
        let cache = try CacheHarness(kind) { request, now in
            .cached(
                "lang=\(request.header("Accept-Language") ?? "-")",
                at: now,
                [("Cache-Control", "max-age=60"), ("Vary", "Accept-Language")]
            )
        }
        #expect(try await cache.send(headers: ["Accept-Language": "en"]).body == "lang=en")
        #expect(try await cache.send(headers: ["Accept-Language": "fr"]).body == "lang=fr")
        let english = try await cache.send(headers: ["Accept-Language": "en"])
        let french = try await cache.send(headers: ["Accept-Language": "fr"])
        #expect(english.status == .hit && english.body == "lang=en")
        #expect(french.status == .hit && french.body == "lang=fr")
        #expect(try await cache.send(headers: ["Accept-Language": "de"]).status == .miss)
        #expect(cache.requestCount == 3)
    }

    @Test(arguments: StoreKind.allCases)
    func staleWhileRevalidateServesStaleAndRefreshesOnce(_ kind: StoreKind) async throws {
        let cache = try CacheHarness(kind) { request, now in
            request.header("If-None-Match") == nil
                ? .cached(
                    "v1",
                    at: now,
                    [("Cache-Control", "max-age=10, stale-while-revalidate=100"), ("ETag", "\"1\"")]
                )
                : .cached(
                    "v2",
                    at: now,
                    [("Cache-Control", "max-age=10, stale-while-revalidate=100"), ("ETag", "\"2\"")]
                )
        }
        _ = try await cache.send()
        cache.clock.advance(by: .seconds(30))
        let stale = try await cache.send()
        #expect(stale.status == .stale)
        #expect(stale.body == "v1")
        #expect(await eventually { cache.plugin.stats.stored == 2 })
        let refreshed = try await cache.send()
        #expect(refreshed.status == .hit)
        #expect(refreshed.body == "v2")
        #expect(cache.requestCount == 2)
    }

    @Test(arguments: StoreKind.allCases)
    func staleIfErrorAnswersWhenTheOriginFails(_ kind: StoreKind) async throws {
        let cache = try CacheHarness(kind) { _, now in
            .cached("kept", at: now, [("Cache-Control", "max-age=10, stale-if-error=300")])
        }
        _ = try await cache.send()
        cache.clock.advance(by: .seconds(100))
        cache.respond { _, _ in .text("down", status: 503) }
        let stale = try await cache.send()
        #expect(stale.status == .stale)
        #expect(stale.body == "kept")
    }

    @Test(arguments: StoreKind.allCases)
    func noStoreAndPrivateWithoutCredentialRules(_ kind: StoreKind) async throws {
        let cache = try CacheHarness(kind) { request, now in
            request.path == "/secret"
                ? .cached("secret", at: now, [("Cache-Control", "no-store")])
                : .cached("mine", at: now, [("Cache-Control", "private, max-age=60")])
        }
        _ = try await cache.send("/secret")
        #expect(try await cache.send("/secret").status == .miss)
        // A private cache may store `private` responses; it keys them by the credential (next test).
        _ = try await cache.send("/private")
        #expect(try await cache.send("/private").status == .hit)
        #expect(cache.requestCount == 3)
    }

    @Test(arguments: StoreKind.allCases)
    func entriesAreKeyedByCredential(_ kind: StoreKind) async throws {
        let cache = try CacheHarness(kind) { request, now in
            .cached("for \(request.header("Authorization") ?? "nobody")", at: now, [("Cache-Control", "max-age=60")])
        }
        #expect(try await cache.send(headers: ["Authorization": "Bearer alice"]).body == "for Bearer alice")
        let bob = try await cache.send(headers: ["Authorization": "Bearer bob"])
        #expect(bob.status == .miss)
        #expect(bob.body == "for Bearer bob")
        let alice = try await cache.send(headers: ["Authorization": "Bearer alice"])
        #expect(alice.status == .hit)
        #expect(alice.body == "for Bearer alice")
        #expect(try await cache.send().status == .miss)
        #expect(cache.requestCount == 3)
    }

    @Test(arguments: StoreKind.allCases)
    func anUnsafeRequestInvalidatesTheURL(_ kind: StoreKind) async throws {
        let cache = try CacheHarness(kind) { _, now in .cached("v", at: now, [("Cache-Control", "max-age=60")]) }
        _ = try await cache.send()
        _ = try await cache.send(headers: ["Authorization": "Bearer a"])
        let endpoint = CacheEndpoint(baseURL: cache.server.baseURL, path: "/resource", method: .post)
        _ = try await cache.provider.request(endpoint: endpoint)
        #expect(try await cache.send().status == .miss)
        #expect(try await cache.send(headers: ["Authorization": "Bearer a"]).status == .miss)
    }
}
