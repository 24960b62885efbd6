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

/// A "Redis" that announces an absurd reply: the store refuses it, and no request waits past one command timeout.
@Suite struct RedisHostileReplyTests {
    static let commandTimeout = Duration.milliseconds(300)

    private static func store(port: Int) throws -> RedisStore {
        try RedisStore(
            configuration: RedisStore.Configuration(
                url: try #require(URL(string: "redis://127.0.0.1:\(port)/0")),
                connectTimeout: commandTimeout,
                commandTimeout: commandTimeout,
                reconnectDelay: .milliseconds(20),
                maximumReconnectDelay: .milliseconds(100)
            )
        )
    }

    @Test(arguments: ["*2147483647\r\n", "*2147483647\r\n*2147483647\r\n", "$2147483647\r\nabc"])
    func anEnormousAnnouncedReplyCostsAtMostOneCommandTimeout(_ reply: String) async throws {
        let hostile = try FixedReplyServer(reply: reply)
        defer { hostile.stop() }
        let store = try Self.store(port: hostile.port)
        let cache = try CacheHarness(store: store, cleanUp: store.shutdown) { _, now in
            .cached("v", at: now, [("Cache-Control", "max-age=60")])
        }
        var slowest = Duration.zero
        for _ in 0..<3 {
            let (answer, elapsed) = try await timed { try await cache.send() }
            #expect(answer.status == .miss && answer.body == "v")
            slowest = max(slowest, elapsed)
        }
        // Before: 9–18 s per request (hiredis freed a 2³¹-element array on the command path, unbounded).
        #expect(slowest < .seconds(1), "a request through a hostile Redis took \(slowest)")
        #expect(cache.recorder.events.contains { $0.source == DiskCachePlugin.eventSource && $0.name == "error" })
    }

    @Test func aStoreCallNeverOutlivesTheCommandTimeout() async throws {
        let hostile = try FixedReplyServer(reply: "*2147483647\r\n")
        defer { hostile.stop() }
        let store = try Self.store(port: hostile.port)
        for _ in 0..<3 {
            let (reply, elapsed) = await timed { await store.rawCommand([Data("PING".utf8)]) }
            #expect(reply == nil)
            #expect(elapsed < .milliseconds(800), "a store call took \(elapsed)")
        }
        await store.shutdown()
    }
}
