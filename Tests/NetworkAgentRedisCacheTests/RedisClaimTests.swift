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

/// Revalidation claims do not outlive their holder: a claim whose release failed, or whose holder is gone, holds
/// other processes' requests at most the store's command timeout.
@Suite(.enabled(if: RedisTestServer.isAvailable, RedisTestServer.skipReason))
struct RedisClaimTests {
    static let commandTimeout = Duration.milliseconds(300)

    private static func store(_ redis: PausableRedis, prefix: String) throws -> RedisStore {
        try RedisStore(
            configuration: RedisStore.Configuration(
                url: try #require(redis.url),
                keyPrefix: prefix,
                connectTimeout: commandTimeout,
                commandTimeout: commandTimeout,
                reconnectDelay: .milliseconds(20),
                maximumReconnectDelay: .milliseconds(100)
            )
        )
    }

    /// A harness on `store` whose origin answers a conditional request with a 304, and its stale entry's key.
    private static func staleEntry(on store: RedisStore) async throws -> (CacheHarness, CacheKey) {
        let cache = try CacheHarness(store: store, cleanUp: store.cleanUp) { request, now in
            request.header("If-None-Match") == "\"1\""
                ? ServerResponse(status: 304, headers: [("Date", httpDate(now)), ("Cache-Control", "max-age=60")])
                : .cached("body", at: now, [("Cache-Control", "max-age=60"), ("ETag", "\"1\"")])
        }
        #expect(try await cache.send().status == .miss)
        cache.clock.advance(by: .seconds(90))
        let key = try #require(
            CacheKey(request: URLRequest(url: cache.server.baseURL.appendingPathComponent("resource")))
        )
        return (cache, key)
    }

    @Test func aClaimWhoseReleaseFailedHoldsOthersAtMostOneCommandTimeout() async throws {
        let redis = try await PausableRedis.start()
        let prefix = RedisTestServer.uniquePrefix()
        let (cache, key) = try await Self.staleEntry(on: try Self.store(redis, prefix: prefix))
        let holder = try Self.store(redis, prefix: prefix)
        #expect(await holder.claimRevalidation(of: key))
        // Redis pauses just as the holder releases its claim, for a second: long enough that the release, queued
        // on a connection, fails there too instead of reaching Redis late.
        try redis.pause()
        let (_, releaseTime) = await timed { await holder.releaseRevalidation(of: key) }
        try await Task.sleep(for: .seconds(1))
        try redis.resume()
        #expect(releaseTime < .seconds(1), "the failed release took \(releaseTime)")

        let (answer, elapsed) = try await timed { try await cache.send() }
        #expect(answer.status == .revalidated && answer.body == "body")
        // Before: the claim lived its 10 s and this request waited revalidationWaitLimit (2 s).
        #expect(elapsed < .seconds(1), "a request waited \(elapsed) on a claim whose release failed")
        await holder.shutdown()
    }

    @Test func aClaimWhoseHolderIsGoneHoldsOthersAtMostOneCommandTimeout() async throws {
        let redis = try await PausableRedis.start()
        let prefix = RedisTestServer.uniquePrefix()
        let (cache, key) = try await Self.staleEntry(on: try Self.store(redis, prefix: prefix))
        do {
            // A holder that claims and disappears without releasing (a crash, a store dropped mid-revalidation):
            // shutting it down stops the renewal of its claim and leaves the claim in Redis.
            let holder = try Self.store(redis, prefix: prefix)
            #expect(await holder.claimRevalidation(of: key))
            await holder.shutdown()
        }
        let (answer, elapsed) = try await timed { try await cache.send() }
        #expect(answer.status == .revalidated && answer.body == "body")
        #expect(elapsed < .seconds(1), "a request waited \(elapsed) on a claim whose holder is gone")
    }

    @Test func aLiveHolderKeepsItsClaimPastTheCommandTimeout() async throws {
        let redis = try await PausableRedis.start()
        let prefix = RedisTestServer.uniquePrefix()
        let key = CacheKey(method: "GET", url: "http://claim.test/a", credential: "", varyNames: [], variant: "")
        let holder = try Self.store(redis, prefix: prefix)
        let other = try Self.store(redis, prefix: prefix)
        #expect(await holder.claimRevalidation(of: key))
        // Three command timeouts: a claim is a lease the holder renews while it revalidates.
        try await Task.sleep(for: Self.commandTimeout * 3)
        #expect(await other.claimRevalidation(of: key) == false)
        await holder.releaseRevalidation(of: key)
        #expect(await other.claimRevalidation(of: key))
        await other.releaseRevalidation(of: key)
        await holder.shutdown()
        await other.shutdown()
    }
}
