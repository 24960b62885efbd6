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

/// The `cache` events and the `stats` snapshot.
@Suite struct DiskCacheEventTests {
    @Test func everyOutcomeEmitsItsEventAndCounts() async throws {
        let cache = try CacheHarness(store: MemoryStore(maximumBytes: 1_700)) { request, now in
            if request.header("If-None-Match") != nil {
                return ServerResponse(status: 304, headers: [("Date", httpDate(now))])
            }
            return .cached(
                String(repeating: "x", count: 400),
                at: now,
                [("Cache-Control", "max-age=10"), ("ETag", "\"e\"")]
            )
        }
        _ = try await cache.send("/a")  // miss, stored
        _ = try await cache.send("/a")  // hit
        cache.clock.advance(by: .seconds(20))
        _ = try await cache.send("/a")  // revalidated, stored
        _ = try await cache.send("/a")  // hit: fresh again after the 304
        _ = try await cache.send("/b")  // miss, stored
        _ = try await cache.send("/c")  // miss, stored, evicts /a (the bound holds two entries of ~800 bytes)
        _ = try await cache.send("/b", method: .post)  // invalidated
        #expect(
            cache.cacheEventNames == [
                "miss", "stored", "hit", "revalidated", "stored", "hit", "miss", "stored", "miss", "stored",
                "evicted", "invalidated",
            ]
        )
        // The lookups are typed for observers such as the metrics plugin; the rest are known by name only.
        #expect(
            cache.recorder.events.filter { $0.source == DiskCachePlugin.eventSource }.map(\.kind) == [
                .cacheMiss, .other(source: "cache", name: "stored"), .cacheHit,
                .cacheRevalidated, .other(source: "cache", name: "stored"), .cacheHit,
                .cacheMiss, .other(source: "cache", name: "stored"), .cacheMiss,
                .other(source: "cache", name: "stored"), .other(source: "cache", name: "evicted"),
                .other(source: "cache", name: "invalidated"),
            ]
        )
        let stats = cache.plugin.stats
        #expect(stats.hits == 2)
        #expect(stats.misses == 3)
        #expect(stats.revalidated == 1)
        #expect(stats.stored == 4)
        #expect(stats.evicted == 1)
        #expect(stats.invalidated == 1)
        #expect(stats.errors == 0)
        #expect(stats.entryCount == 1)
        #expect(stats.totalBytes > 0)
        let miss = try #require(cache.recorder.events.first)
        #expect(miss.source == "cache")
        #expect(miss.attributes["method"] == "GET")
        #expect(miss.attributes["reason"] == "not_stored")
    }

    @Test func noStatusHeaderWhenConfiguredWithout() async throws {
        let cache = try CacheHarness(
            store: MemoryStore(),
            configure: { $0.statusHeader = nil },
            handler: { _, now in .cached("x", at: now, [("Cache-Control", "max-age=10")]) }
        )
        _ = try await cache.send()
        let hit = try await cache.send()
        #expect(hit.status == nil)
        #expect(hit.header(DiskCachePlugin.defaultStatusHeader) == nil)
        #expect(cache.requestCount == 1)
    }

    @Test func theStatusHeaderIsNotStored() async throws {
        // The origin sends the header too (a server behind another NetworkAgent cache would): the plugin's own
        // label is stored neither way, so a stored entry never carries a stale one.
        let store = MemoryStore()
        let header = DiskCachePlugin.defaultStatusHeader
        let cache = try CacheHarness(store: store) { _, now in
            .cached("x", at: now, [("Cache-Control", "max-age=10"), (header, "from-the-origin")])
        }
        #expect(try await cache.send().header(header) == "miss")
        let url = cache.server.baseURL.appending(path: "resource")
        let key = try #require(CacheKey(request: URLRequest(url: url)))
        let stored = try #require(try await store.entry(for: key))
        #expect(stored.body == Data("x".utf8))
        #expect(stored.header("Cache-Control") == "max-age=10")
        #expect(stored.header(header) == nil, "stored headers: \(stored.headers)")
        #expect(try await cache.send().header(header) == "hit")
    }
}
