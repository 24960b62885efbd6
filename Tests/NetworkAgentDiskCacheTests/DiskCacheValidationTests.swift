import Foundation
import NetworkAgent
import NetworkAgentDiskCache
import NetworkAgentTestServer
import NetworkAgentTestSupport
import NetworkAgentTesting
import Synchronization
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Validation of stale responses over the wire (RFC 9111 §4.3): conditional requests, 304 merging, new versions.
@Suite struct DiskCacheValidationTests {
    @Test func a304RefreshesTheStoredHeadersAndServesTheStoredBody() async throws {
        let cache = try CacheHarness { _, now in
            .cached("original", at: now, [("Cache-Control", "max-age=10"), ("ETag", "\"v1\""), ("X-Version", "1")])
        }
        _ = try await cache.send()
        cache.clock.advance(by: .seconds(20))
        cache.respond { request, now in
            guard request.header("If-None-Match") == "\"v1\"" else { return .text("unexpected", status: 500) }
            return ServerResponse(
                status: 304,
                headers: [
                    ("Date", httpDate(now)), ("ETag", "\"v1\""), ("Cache-Control", "max-age=100"), ("X-Version", "2"),
                    ("Content-Length", "0"),
                ]
            )
        }
        let revalidated = try await cache.send()
        #expect(revalidated.status == .revalidated)
        #expect(revalidated.response.statusCode == 200)
        #expect(revalidated.body == "original")
        #expect(revalidated.header("X-Version") == "2")
        #expect(revalidated.header("Content-Type") == "text/plain; charset=utf-8")
        #expect(revalidated.header("Content-Length") == "8")
        // The merged headers are stored: fresh for 100 s from the 304.
        cache.clock.advance(by: .seconds(90))
        let hit = try await cache.send()
        #expect(hit.status == .hit)
        #expect(hit.header("X-Version") == "2")
        #expect(hit.header("Age") == "90")
        #expect(cache.requestCount == 2)
        #expect(cache.plugin.stats.revalidated == 1)
    }

    @Test func lastModifiedIsSentAsIfModifiedSince() async throws {
        let lastModified = httpDate(ManualClock.cacheStart.addingTimeInterval(-50))
        let cache = try CacheHarness { request, now in
            request.header("If-Modified-Since") == lastModified
                ? ServerResponse(status: 304, headers: [("Date", httpDate(now))])
                : .cached("lm", at: now, [("Cache-Control", "max-age=1"), ("Last-Modified", lastModified)])
        }
        _ = try await cache.send()
        cache.clock.advance(by: .seconds(5))
        let answer = try await cache.send()
        #expect(answer.status == .revalidated)
        #expect(answer.body == "lm")
        #expect(cache.server.requests.last?.header("If-None-Match") == nil)
    }

    @Test func aNewVersionReplacesTheStoredOne() async throws {
        let cache = try CacheHarness { _, now in
            .cached("one", at: now, [("Cache-Control", "max-age=10"), ("ETag", "\"1\"")])
        }
        _ = try await cache.send()
        cache.clock.advance(by: .seconds(20))
        cache.respond { _, now in .cached("two", at: now, [("Cache-Control", "max-age=10"), ("ETag", "\"2\"")]) }
        let changed = try await cache.send()
        #expect(changed.status == .miss)
        #expect(changed.body == "two")
        #expect(cache.server.requests.last?.header("If-None-Match") == "\"1\"")
        let hit = try await cache.send()
        #expect(hit.status == .hit)
        #expect(hit.body == "two")
        #expect(cache.requestCount == 2)
    }

    @Test func a304ForAnotherRepresentationIsFollowedByAnUnconditionalRequest() async throws {
        let cache = try CacheHarness { _, now in
            .cached("mine", at: now, [("Cache-Control", "max-age=10"), ("ETag", "\"mine\"")])
        }
        _ = try await cache.send()
        cache.clock.advance(by: .seconds(20))
        cache.respond { request, now in
            request.header("If-None-Match") != nil
                ? ServerResponse(status: 304, headers: [("Date", httpDate(now)), ("ETag", "\"other\"")])
                : .cached("fresh", at: now, [("Cache-Control", "max-age=10"), ("ETag", "\"new\"")])
        }
        let answer = try await cache.send()
        #expect(answer.body == "fresh")
        #expect(answer.status == .miss)
        #expect(cache.requestCount == 3)
        #expect(cache.server.requests.last?.header("If-None-Match") == nil)
    }

    @Test func mustRevalidateIsNeverServedStale() async throws {
        let cache = try CacheHarness(
            configure: { $0.offlineFallback = .seconds(3_600) },
            handler: { _, now in
                .cached("strict", at: now, [("Cache-Control", "max-age=10, must-revalidate"), ("ETag", "\"s\"")])
            }
        )
        _ = try await cache.send()
        cache.clock.advance(by: .seconds(20))
        cache.respond { _, now in ServerResponse(status: 304, headers: [("Date", httpDate(now))]) }
        #expect(try await cache.send(headers: ["Cache-Control": "max-stale=3600"]).status == .revalidated)
        #expect(cache.requestCount == 2)
        cache.clock.advance(by: .seconds(20))
        cache.server.stop()
        await #expect(throws: NetworkAgentError.self) { try await cache.send() }
    }
}
