import Foundation
import NetworkAgent
import NetworkAgentDiskCache
import NetworkAgentRedisCache
import NetworkAgentTestServer
import NetworkAgentTestSupport
import NetworkAgentTesting
import NetworkAgentToolSupport
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Collapsed forwarding across processes on one Redis: one process fetches a missing response for all, the others
/// wait for it within the bound, and a holder of the claim that is gone holds nobody up.
@Suite(.enabled(if: RedisTestServer.isAvailable, RedisTestServer.skipReason))
struct RedisMissCoalescingTests {
    static let commandTimeout = Duration.milliseconds(300)

    /// A store on the test Redis that notices a lapsed claim within ``commandTimeout``.
    static func store(prefix: String) throws -> RedisStore {
        try RedisTestServer.makeStore(prefix: prefix) { $0.commandTimeout = commandTimeout }
    }

    /// The claim key of the harness's resource.
    static func claim(_ cache: CacheHarness) throws -> CacheKey {
        let request = URLRequest(url: cache.server.baseURL.appendingPathComponent("resource"))
        return try #require(CacheKey(request: request)).missClaim
    }

    /// 4 processes × 25 concurrent requests for a resource nothing has stored: one request reaches the origin.
    @Test func twentyFiveColdMissesInEachOfFourProcessesMakeOneOriginRequest() async throws {
        let redis = try RedisTestServer.requireURL()
        let prefix = RedisTestServer.uniquePrefix()
        let origin = try LoopbackServer { _ in
            ServerResponse(
                status: 200,
                headers: [("Date", httpDate(Date())), ("Cache-Control", "max-age=300")],
                body: .data(Data("cold".utf8)),
                delay: .milliseconds(100)
            )
        }
        defer { origin.stop() }
        let summaries = try await RedisWorker.runWorkers(
            executable: RedisSharingTests.workerExecutable(),
            count: 4,
            redis: redis,
            prefix: prefix,
            resource: origin.baseURL.appendingPathComponent("cold"),
            requests: 25,
            clockOffset: 0
        )
        let total = { (name: String) in summaries.reduce(0) { $0 + ($1[name] ?? 0) } }
        #expect(total("ok") == 100 && total("failed") == 0, "workers: \(summaries)")
        #expect(origin.requestCount == 1, "workers: \(summaries)")
        #expect(total("miss") == 1 && total("hit") == 99)
        let written = try RedisTestServer.makeStore(prefix: prefix)
        await written.removeAll()
        await written.shutdown()
    }

    @Test func aMissClaimWhoseHolderIsGoneHoldsOthersAtMostOneCommandTimeout() async throws {
        let prefix = RedisTestServer.uniquePrefix()
        let cache = try CacheHarness(
            store: try Self.store(prefix: prefix),
            configure: { $0.missWaitLimit = .seconds(5) },
            handler: { _, now in .cached("body", at: now, [("Cache-Control", "max-age=60")]) }
        )
        do {
            // A holder that claims the fetch and disappears without releasing it (a crash): shutting the store down
            // stops its lease renewal and releases nothing.
            let holder = try Self.store(prefix: prefix)
            #expect(await holder.claimRevalidation(of: try Self.claim(cache)))
            await holder.shutdown()
        }
        let (answer, elapsed) = try await timed { try await cache.send() }
        #expect(answer.status == .miss && answer.body == "body")
        #expect(elapsed < .seconds(1), "a request waited \(elapsed) on a claim whose holder is gone")
        #expect(cache.requestCount == 1)
        await Self.cleanUp(cache)
    }

    @Test func aLiveHolderHoldsOthersNoLongerThanTheBound() async throws {
        let prefix = RedisTestServer.uniquePrefix()
        let bound = Duration.milliseconds(400)
        let cache = try CacheHarness(
            store: try Self.store(prefix: prefix),
            configure: { $0.missWaitLimit = bound },
            handler: { _, now in .cached("body", at: now, [("Cache-Control", "max-age=60")]) }
        )
        // Another process holds the claim and never stores anything (its origin is slower than the bound).
        let holder = try Self.store(prefix: prefix)
        let claim = try Self.claim(cache)
        #expect(await holder.claimRevalidation(of: claim))
        let (answer, elapsed) = try await timed { try await cache.send() }
        #expect(answer.status == .miss && answer.body == "body")
        #expect(elapsed >= bound && elapsed < bound + .seconds(1), "a request waited \(elapsed)")
        #expect(cache.recorder.count(from: DiskCachePlugin.eventSource, named: "coalescing_timeout") == 1)
        await holder.releaseRevalidation(of: claim)
        await holder.shutdown()
        await Self.cleanUp(cache)
    }

    @Test func aResponseAnotherProcessStoresAnswersTheWaiter() async throws {
        let prefix = RedisTestServer.uniquePrefix()
        let cache = try CacheHarness(
            store: try Self.store(prefix: prefix),
            configure: { $0.missWaitLimit = .seconds(5) },
            handler: { _, now in .cached("from here", at: now, [("Cache-Control", "max-age=60")]) }
        )
        // The holder, in another process, stores the response 200 ms after this request starts waiting.
        let holder = try Self.store(prefix: prefix)
        let claim = try Self.claim(cache)
        #expect(await holder.claimRevalidation(of: claim))
        let other = DiskCachePlugin(store: holder, configuration: .init(now: { [clock = cache.clock] in clock.date }))
        let provider = NetworkAgentProvider<CacheEndpoint>(plugins: [other], agent: TestTransport.agent())
        let storing = Task {
            try await Task.sleep(for: .milliseconds(200))
            cache.respond { _, now in .cached("from there", at: now, [("Cache-Control", "max-age=60")]) }
            // Stored under the claim this test holds for it: the other process's own request would wait for it.
            _ = try await provider.request(
                endpoint: CacheEndpoint(
                    baseURL: cache.server.baseURL,
                    path: "/resource",
                    headers: ["Accept": "text/plain", "Cache-Control": "no-cache"]
                )
            )
            await holder.releaseRevalidation(of: claim)
        }
        let answer = try await cache.send()
        try await storing.value
        #expect(answer.status == .hit && answer.body == "from there")
        #expect(cache.requestCount == 1)
        await holder.shutdown()
        await Self.cleanUp(cache)
    }

    /// Removes the test's keys and shuts the harness's store down.
    private static func cleanUp(_ cache: CacheHarness) async {
        await (cache.plugin.store as? RedisStore)?.removeAll()
        await (cache.plugin.store as? RedisStore)?.shutdown()
    }
}
