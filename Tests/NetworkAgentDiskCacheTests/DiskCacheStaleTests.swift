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

/// Serving stale responses over the wire: `stale-while-revalidate`, `stale-if-error` (RFC 5861) and the offline
/// fallback.
@Suite struct DiskCacheStaleTests {
    /// A gate the origin's handler waits on (on the server's connection thread) until the test opens it.
    final class Gate: Sendable {
        private let semaphore = DispatchSemaphore(value: 0)
        func wait() { _ = semaphore.wait(timeout: .now() + 10) }
        func open() { semaphore.signal() }
    }

    @Test func staleWhileRevalidateServesStaleAndRefreshesOnceInTheBackground() async throws {
        let cache = try CacheHarness { _, now in
            .cached("v1", at: now, [("Cache-Control", "max-age=10, stale-while-revalidate=100"), ("ETag", "\"1\"")])
        }
        _ = try await cache.send()
        cache.clock.advance(by: .seconds(30))
        let gate = Gate()
        cache.respond { request, now in
            gate.wait()
            return request.header("If-None-Match") == "\"1\""
                ? .cached(
                    "v2",
                    at: now,
                    [("Cache-Control", "max-age=10, stale-while-revalidate=100"), ("ETag", "\"2\"")]
                )
                : .text("unexpected", status: 500)
        }
        // While the refresh is held at the origin, every request is answered stale and no second refresh starts.
        for _ in 0..<5 {
            let stale = try await cache.send()
            #expect(stale.status == .stale)
            #expect(stale.body == "v1")
        }
        #expect(await eventually { cache.requestCount == 2 })
        gate.open()
        #expect(await eventually { cache.plugin.stats.stored == 2 })
        let refreshed = try await cache.send()
        #expect(refreshed.status == .hit)
        #expect(refreshed.body == "v2")
        #expect(cache.requestCount == 2)
        #expect(cache.plugin.stats.staleServed == 5)
        // The background task inherited the caller's event observers.
        #expect(await eventually { cache.cacheEventNames.contains("stored") })
    }

    @Test func pastTheStaleWhileRevalidateWindowTheRequestWaitsForValidation() async throws {
        let cache = try CacheHarness { request, now in
            request.header("If-None-Match") == nil
                ? .cached(
                    "v1",
                    at: now,
                    [("Cache-Control", "max-age=10, stale-while-revalidate=20"), ("ETag", "\"1\"")]
                )
                : ServerResponse(status: 304, headers: [("Date", httpDate(now))])
        }
        _ = try await cache.send()
        cache.clock.advance(by: .seconds(31))
        #expect(try await cache.send().status == .revalidated)
        #expect(cache.requestCount == 2)
    }

    @Test func staleIfErrorServesStaleWhenTheServerIsDown() async throws {
        let cache = try CacheHarness { _, now in
            .cached("kept", at: now, [("Cache-Control", "max-age=10, stale-if-error=300"), ("ETag", "\"k\"")])
        }
        _ = try await cache.send()
        cache.server.stop()
        cache.clock.advance(by: .seconds(100))
        let stale = try await cache.send()
        #expect(stale.status == .stale)
        #expect(stale.body == "kept")
        #expect(stale.response.statusCode == 200)
        #expect(cache.recorder.events.contains { $0.name == "stale" && $0.attributes["reason"] == "stale_if_error" })
        cache.clock.advance(by: .seconds(300))
        await #expect(throws: NetworkAgentError.self) { try await cache.send() }
    }

    @Test(arguments: [500, 502, 503, 504])
    func staleIfErrorServesStaleOnServerErrors(_ status: Int) async throws {
        let cache = try CacheHarness { _, now in
            .cached("kept", at: now, [("Cache-Control", "max-age=10, stale-if-error=300")])
        }
        _ = try await cache.send()
        cache.clock.advance(by: .seconds(100))
        cache.respond { _, _ in .text("down", status: status) }
        let stale = try await cache.send()
        #expect(stale.status == .stale)
        #expect(stale.body == "kept")
        #expect(cache.requestCount == 2)
    }

    @Test func aClientErrorIsPassedOnNotHiddenByStaleIfError() async throws {
        let cache = try CacheHarness { _, now in
            .cached("kept", at: now, [("Cache-Control", "max-age=10, stale-if-error=300")])
        }
        _ = try await cache.send()
        cache.clock.advance(by: .seconds(100))
        cache.respond { _, _ in .text("nope", status: 403) }
        let answer = try await cache.send()
        #expect(answer.response.statusCode == 403)
        #expect(answer.status == .miss)
    }

    @Test func theRequestMayAskForStaleIfErrorItself() async throws {
        let cache = try CacheHarness { _, now in .cached("kept", at: now, [("Cache-Control", "max-age=10")]) }
        _ = try await cache.send()
        cache.server.stop()
        cache.clock.advance(by: .seconds(60))
        await #expect(throws: NetworkAgentError.self) { try await cache.send() }
        #expect(try await cache.send(headers: ["Cache-Control": "stale-if-error=120"]).status == .stale)
    }

    @Test func theOfflineFallbackServesStaleWithinItsWindow() async throws {
        let cache = try CacheHarness(
            configure: { $0.offlineFallback = .seconds(86_400) },
            handler: { _, now in .cached("offline copy", at: now) }
        )
        // Without any freshness or validator the response is stored only because of the fallback.
        _ = try await cache.send()
        #expect(cache.plugin.stats.stored == 1)
        let online = try await cache.send()
        #expect(online.status == .miss)
        #expect(cache.requestCount == 2)
        cache.server.stop()
        cache.clock.advance(by: .seconds(3_600))
        let offline = try await cache.send()
        #expect(offline.status == .stale)
        #expect(offline.body == "offline copy")
        cache.clock.advance(by: .seconds(86_400))
        await #expect(throws: NetworkAgentError.self) { try await cache.send() }
    }

    @Test func noCacheResponsesAreNotServedStaleEvenOffline() async throws {
        let cache = try CacheHarness(
            configure: { $0.offlineFallback = .seconds(86_400) },
            handler: { _, now in .cached("x", at: now, [("Cache-Control", "no-cache"), ("ETag", "\"n\"")]) }
        )
        _ = try await cache.send()
        cache.server.stop()
        await #expect(throws: NetworkAgentError.self) { try await cache.send() }
    }
}
