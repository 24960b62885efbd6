import Foundation
import NetworkAgent
import NetworkAgentDiskCache
import NetworkAgentTestServer
import NetworkAgentTestSupport
import NetworkAgentTesting
import Testing

@testable import NetworkAgentRedisCache

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What only the Redis store does: configuration, TTLs, limits, corrupt values, and a Redis that is not there.
@Suite struct RedisStoreConfigurationTests {
    @Test func aTLSURLIsRefusedWithATypedError() throws {
        let url = try #require(URL(string: "rediss://cache.example:6380/0"))
        #expect { try RedisStore(url: url) } throws: { ($0 as? RedisStore.Error)?.code == .tlsUnsupported }
    }

    @Test(arguments: ["http://cache.example", "redis://", "redis://host:6379/zero", "redis://host:6379/-1"])
    func anInvalidURLIsRefused(_ text: String) throws {
        let url = try #require(URL(string: text))
        #expect { try RedisStore(url: url) } throws: { ($0 as? RedisStore.Error)?.code == .invalidURL }
    }

    @Test func theURLGivesHostPortDatabaseAndCredentials() throws {
        let endpoint = try RedisEndpoint(url: try #require(URL(string: "redis://app:s%40cret@cache.internal:6390/3")))
        #expect(endpoint.host == "cache.internal")
        #expect(endpoint.port == 6390)
        #expect(endpoint.database == 3)
        #expect(endpoint.user == "app")
        #expect(endpoint.password == "s@cret")
        let bare = try RedisEndpoint(url: try #require(URL(string: "redis://:pw@localhost")))
        #expect(bare.port == 6379 && bare.database == 0 && bare.user == nil && bare.password == "pw")
    }

    @Test func aRedisThatIsNotThereMakesMissesAndEventsNeverFailures() async throws {
        let port = try unusedLoopbackPort()
        let store = try RedisStore(
            configuration: RedisStore.Configuration(
                url: try #require(URL(string: "redis://127.0.0.1:\(port)/0")),
                connectTimeout: .milliseconds(200)
            )
        )
        let cache = try CacheHarness(store: store, cleanUp: store.cleanUp) { _, now in
            .cached("v", at: now, [("Cache-Control", "max-age=60")])
        }
        for _ in 0..<3 {
            let answer = try await cache.send()
            #expect(answer.status == .miss)
            #expect(answer.body == "v")
        }
        #expect(cache.requestCount == 3)
        let errors = cache.recorder.events.filter { $0.source == DiskCachePlugin.eventSource && $0.name == "error" }
        #expect(!errors.isEmpty)
        #expect(errors.allSatisfy { $0.attributes["reason"] == "unavailable" })
    }

    @Test func aServerThatIsNotRedisMakesMissesNeverFailures() async throws {
        // An HTTP server: it answers hiredis's commands with an HTTP error, or not at all.
        let notRedis = try LoopbackServer { _ in ServerResponse(status: 400, delay: .seconds(2)) }
        defer { notRedis.stop() }
        let store = try RedisStore(
            configuration: RedisStore.Configuration(
                url: try #require(URL(string: "redis://127.0.0.1:\(notRedis.port)/0")),
                connectTimeout: .milliseconds(200),
                commandTimeout: .milliseconds(200)
            )
        )
        let cache = try CacheHarness(store: store, cleanUp: store.cleanUp) { _, now in
            .cached("v", at: now, [("Cache-Control", "max-age=60")])
        }
        for _ in 0..<2 {
            let answer = try await cache.send()
            #expect(answer.status == .miss)
            #expect(answer.body == "v")
        }
        #expect(cache.recorder.events.contains { $0.source == DiskCachePlugin.eventSource && $0.name == "error" })
    }
}

@Suite(.enabled(if: RedisTestServer.isAvailable, RedisTestServer.skipReason))
struct RedisStoreTests {
    @Test func theTTLCoversFreshnessTheStaleWindowAndTheValidatorKeepPeriod() async throws {
        let store = try RedisTestServer.makeStore { $0.validatorKeepPeriod = .seconds(1_000) }
        let cache = try CacheHarness(store: store, cleanUp: store.cleanUp) { request, now in
            request.path == "/plain"
                ? .cached("p", at: now, [("Cache-Control", "max-age=60, stale-if-error=30")])
                : .cached(
                    "v",
                    at: now,
                    [("Cache-Control", "max-age=60, stale-while-revalidate=30"), ("ETag", "\"1\"")]
                )
        }
        _ = try await cache.send("/plain")
        _ = try await cache.send("/validated")
        let plain = try await ttl(of: "/plain", cache: cache, store: store)
        let validated = try await ttl(of: "/validated", cache: cache, store: store)
        // Redis counts down in real time; allow for the seconds the test itself takes.
        #expect((80_000...90_000).contains(plain), "plain TTL \(plain) ms")
        #expect((1_080_000...1_090_000).contains(validated), "validated TTL \(validated) ms")
    }

    private func ttl(of path: String, cache: CacheHarness, store: RedisStore) async throws -> Int {
        let key = try #require(CacheKey(request: URLRequest(url: cache.server.baseURL.appendingPathComponent(path))))
        let reply = await store.rawCommand([Data("PTTL".utf8), Data(store.redisKey(for: key).utf8)])
        guard case .integer(let milliseconds) = reply else {
            Issue.record("PTTL answered \(String(describing: reply))")
            return -1
        }
        return milliseconds
    }

    @Test func aCorruptValueIsIgnoredReportedAndReplaced() async throws {
        let store = try RedisTestServer.makeStore()
        let cache = try CacheHarness(store: store, cleanUp: store.cleanUp) { _, now in
            .cached("good", at: now, [("Cache-Control", "max-age=60")])
        }
        _ = try await cache.send()
        let key = try #require(
            CacheKey(request: URLRequest(url: cache.server.baseURL.appendingPathComponent("resource")))
        )
        let redisKey = Data(store.redisKey(for: key).utf8)
        // Written by hand, as a stray client or a torn copy would: same key, bytes that are not an entry.
        #expect(await store.rawCommand([Data("SET".utf8), redisKey, Data("NACE garbage".utf8)]) == .status("OK"))
        let afterCorruption = try await cache.send()
        #expect(afterCorruption.status == .miss)
        #expect(afterCorruption.body == "good")
        #expect(
            cache.recorder.events.contains {
                $0.name == "error" && $0.attributes["reason"] == "corrupt_entry" && $0.attributes["store"] == "redis"
            }
        )
        let replaced = try await cache.send()
        #expect(replaced.status == .hit)
        #expect(replaced.body == "good")
        #expect(cache.requestCount == 2)
        guard case .string(let bytes) = await store.rawCommand([Data("GET".utf8), redisKey]) else {
            Issue.record("the entry was not written again")
            return
        }
        #expect(bytes.starts(with: Array("NACE".utf8)) && bytes.count > 40)
    }

    @Test func aBodyOverTheLimitIsNotShared() async throws {
        let store = try RedisTestServer.makeStore { $0.maximumEntryBytes = 1_000 }
        let cache = try CacheHarness(store: store, cleanUp: store.cleanUp) { request, now in
            .cached(
                String(repeating: "x", count: request.path == "/large" ? 1_001 : 1_000),
                at: now,
                [("Cache-Control", "max-age=60")]
            )
        }
        _ = try await cache.send("/large")
        #expect(try await cache.send("/large").status == .miss)
        _ = try await cache.send("/small")
        #expect(try await cache.send("/small").status == .hit)
    }

    @Test func twoStoresWithDifferentPrefixesDoNotSeeEachOther() async throws {
        let first = try RedisTestServer.makeStore()
        let second = try RedisTestServer.makeStore()
        let entry = CachedEntry(
            key: CacheKey(method: "GET", url: "http://prefix.test/a", credential: "", varyNames: [], variant: ""),
            responseURL: try #require(URL(string: "http://prefix.test/a")),
            statusCode: 200,
            headers: ["Cache-Control": "max-age=60"],
            body: Data("a".utf8),
            requestDate: Date(),
            responseDate: Date()
        )
        try await first.store(
            entry,
            retention: EntryRetention(freshFor: .seconds(60), staleFor: .zero, hasValidator: false)
        )
        #expect(try await first.variants(forPrimaryKey: entry.key.primary).map(\.body) == [entry.body])
        #expect(try await second.variants(forPrimaryKey: entry.key.primary).isEmpty)
        #expect(await first.removeEntries(forURL: "http://prefix.test/a") == 1)
        #expect(try await first.variants(forPrimaryKey: entry.key.primary).isEmpty)
        await first.cleanUp()
        await second.cleanUp()
    }
}
