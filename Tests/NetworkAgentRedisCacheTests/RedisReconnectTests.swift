import Foundation
import NetworkAgent
import NetworkAgentDiskCache
import NetworkAgentTestServer
import NetworkAgentTestSupport
import Testing

@testable import NetworkAgentRedisCache

/// Reconnecting (`AUTH`, `SELECT`, the scripts' loads) does not hold up the commands queued meanwhile: they go out
/// with the new connection's setup, in its round trip.
@Suite(.enabled(if: RedisTestServer.isAvailable, RedisTestServer.skipReason))
struct RedisReconnectTests {
    /// The round trip to the Redis behind the proxy.
    static let roundTrip = Duration.milliseconds(150)

    @Test func commandsQueuedDuringAReconnectAreAnsweredInItsRoundTrip() async throws {
        // A Redis of the test's own: the test makes it forget the scripts, which other tests' stores rely on.
        let redis = try PrivateRedis()
        try #require(try await redis.start(), "redis-server did not start on port \(redis.port)")
        let proxy = try DelayingProxy(to: redis.port, delay: Self.roundTrip)
        defer { proxy.stop() }
        let store = try RedisStore(
            configuration: RedisStore.Configuration(
                url: try #require(URL(string: "redis://127.0.0.1:\(proxy.port)/0")),
                connectTimeout: .seconds(2),
                commandTimeout: .seconds(2),
                connectionCount: 1
            )
        )
        let primary = CacheKey(
            method: "GET",
            url: "http://reconnect.test/a",
            credential: "",
            varyNames: [],
            variant: ""
        )
        .primary
        // The first connection loads the scripts and learns their SHAs.
        #expect(try await store.variants(forPrimaryKey: primary).isEmpty)
        // Redis forgets them (a restart or SCRIPT FLUSH would): the next script call answers NOSCRIPT and the
        // connection is set up again, loading them, before the next command.
        #expect(await store.rawCommand([Data("SCRIPT".utf8), Data("FLUSH".utf8)]) == .status("OK"))
        await #expect(throws: (any Error).self) { try await store.variants(forPrimaryKey: primary) }

        let clock = ContinuousClock()
        let start = clock.now
        // The first command starts the reconnection; seven more are queued while it runs.
        let trigger = Task { (try? await store.variants(forPrimaryKey: primary)).map { _ in clock.now - start } }
        try await Task.sleep(for: .milliseconds(20))
        let queued = await withTaskGroup(of: Duration?.self) { group in
            for _ in 0..<7 {
                group.addTask { (try? await store.variants(forPrimaryKey: primary)).map { _ in clock.now - start } }
            }
            return await group.reduce(into: [Duration?]()) { $0.append($1) }
        }
        let first = try #require(await trigger.value, "the command that reconnected failed")
        #expect(queued.allSatisfy { $0 != nil }, "a command queued during the reconnection failed")
        let slowest = queued.compactMap { $0 }.max() ?? .zero
        // Before: the setup took a round trip per command (7 script loads) before the command went out: 8 round
        // trips for the first command, 9 for those queued behind it. Now the setup and the command share one, and
        // the commands queued meanwhile follow in the next.
        #expect(first < Self.roundTrip * 1.5, "the command that reconnected took \(first)")
        #expect(slowest < Self.roundTrip * 2.5, "commands queued during the reconnection took up to \(slowest)")
        await store.shutdown()
    }
}
