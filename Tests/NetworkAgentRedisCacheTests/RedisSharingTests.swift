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

/// Several processes on one Redis: they share entries, and one of them revalidates a stale entry for all.
///
/// The other processes are `RedisCacheWorker` children; the origin is a loopback server in this process, which
/// counts what reaches it.
@Suite(.enabled(if: RedisTestServer.isAvailable, RedisTestServer.skipReason))
struct RedisSharingTests {
    /// The worker process, built next to the test bundle. `RedisWorker.runWorkers` starts workers together and
    /// returns their summaries: counts by name (`ok`, `failed`, `hit`, `stale`, `revalidated`, `miss`).
    static func workerExecutable() throws -> String {
        try siblingExecutable("RedisCacheWorker").path
    }

    @Test func twoProcessesShareEntries() async throws {
        let redis = try RedisTestServer.requireURL()
        let prefix = RedisTestServer.uniquePrefix()
        let origin = try LoopbackServer { _ in
            .text("shared", headers: [("Date", httpDate(Date())), ("Cache-Control", "max-age=300")])
        }
        defer { origin.stop() }
        let resource = origin.baseURL.appendingPathComponent("shared")
        // One worker, one request: a miss that stores the entry, then, in a second process, a hit.
        let runOneWorker = {
            try await RedisWorker.runWorkers(
                executable: Self.workerExecutable(),
                count: 1,
                redis: redis,
                prefix: prefix,
                resource: resource,
                requests: 1,
                clockOffset: 0
            )
        }
        let first = try await runOneWorker()
        #expect(first == [["ok": 1, "failed": 0, "hit": 0, "stale": 0, "revalidated": 0, "miss": 1]])
        let second = try await runOneWorker()
        #expect(second == [["ok": 1, "failed": 0, "hit": 1, "stale": 0, "revalidated": 0, "miss": 0]])
        #expect(origin.requestCount == 1)
        await (try RedisTestServer.makeStore(prefix: prefix)).cleanUp()
    }

    /// 4 processes × 50 concurrent requests for an entry that is stale for all of them (their clocks run two
    /// minutes ahead of the one that stored it) and needs validation: one conditional request reaches the origin.
    @Test func fiftyStaleHitsInEachOfFourProcessesRevalidateOnce() async throws {
        let redis = try RedisTestServer.requireURL()
        let prefix = RedisTestServer.uniquePrefix()
        let offset = 120
        let conditional = Locked(0)
        let origin = try LoopbackServer { request in
            // Dated on the workers' clock, so that the revalidated entry is fresh for them.
            let date = httpDate(Date().addingTimeInterval(TimeInterval(offset)))
            if request.header("If-None-Match") == "\"v1\"" {
                conditional.withLock { $0 += 1 }
                return ServerResponse(
                    status: 304,
                    headers: [("Date", date), ("Cache-Control", "max-age=60"), ("ETag", "\"v1\"")],
                    delay: .milliseconds(50)
                )
            }
            return .text(
                "popular",
                headers: [("Date", httpDate(Date())), ("Cache-Control", "max-age=60"), ("ETag", "\"v1\"")]
            )
        }
        defer { origin.stop() }
        let resource = origin.baseURL.appendingPathComponent("popular")
        // Stored by this process, at the wall-clock time.
        let store = try RedisTestServer.makeStore(prefix: prefix)
        let provider = NetworkAgentProvider<CacheEndpoint>(
            plugins: [DiskCachePlugin(store: store)],
            agent: TestTransport.agent()
        )
        _ = try await provider.request(endpoint: CacheEndpoint(baseURL: origin.baseURL, path: "/popular"))
        #expect(origin.requestCount == 1)

        let summaries = try await RedisWorker.runWorkers(
            executable: Self.workerExecutable(),
            count: 4,
            redis: redis,
            prefix: prefix,
            resource: resource,
            requests: 50,
            clockOffset: offset
        )
        #expect(summaries.reduce(0) { $0 + ($1["ok"] ?? 0) } == 200)
        #expect(summaries.reduce(0) { $0 + ($1["failed"] ?? 0) } == 0)
        #expect(conditional.withLock { $0 } == 1, "conditional requests at the origin; workers: \(summaries)")
        #expect(origin.requestCount == 2)
        #expect(summaries.reduce(0) { $0 + ($1["revalidated"] ?? 0) } == 1)
        await store.cleanUp()
    }
}
