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

/// A Redis run as a cache, `maxmemory` with `allkeys-lru`, that fills up: it evicts, and the cache only misses.
@Suite(.enabled(if: RedisTestServer.isAvailable, RedisTestServer.skipReason))
struct RedisEvictionTests {
    @Test func underAllKeysLRUAFullRedisEvictsAndTheCacheOnlyMisses() async throws {
        let redis = try PrivateRedis()
        try #require(
            try await redis.start(["--maxmemory", "3mb", "--maxmemory-policy", "allkeys-lru"]),
            "redis-server did not start on port \(redis.port)"
        )
        let store = try RedisStore(url: try #require(redis.url))
        let body = String(repeating: "x", count: 32 << 10)
        let cache = try CacheHarness(store: store, cleanUp: store.cleanUp) { request, now in
            .cached("\(request.path) \(body)", at: now, [("Cache-Control", "max-age=600")])
        }
        // 10 MiB of entries through a 3 MiB Redis.
        let paths = (0..<320).map { "/item/\($0)" }
        for path in paths {
            let answer = try await cache.send(path)
            #expect(answer.status == .miss)
            #expect(answer.body.hasPrefix("\(path) "))
        }
        // The most recent entries are still there (read newest first, before anything else is stored)…
        var recentHits = 0
        for path in paths.suffix(5).reversed() where try await cache.send(path).status == .hit { recentHits += 1 }
        #expect(recentHits > 0)
        // …the oldest have been evicted: misses, fetched and stored again, never failures.
        var oldMisses = 0
        for path in paths.prefix(50) {
            let answer = try await cache.send(path)
            #expect(answer.body.hasPrefix("\(path) "))
            if answer.status == .miss { oldMisses += 1 }
        }
        #expect(oldMisses > 0)
        #expect(cache.recorder.events.filter { $0.name == "error" }.isEmpty)
    }
}
