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

/// `shutdown()`: in-flight work finishes or fails with a typed error, new work fails with one, the threads exit.
@Suite(.enabled(if: RedisTestServer.isAvailable, RedisTestServer.skipReason))
struct RedisShutdownTests {
    private static let key = CacheKey(
        method: "GET",
        url: "http://shutdown.test/a",
        credential: "",
        varyNames: [],
        variant: ""
    )

    @Test func shutdownFinishesInFlightWorkFailsNewWorkAndStopsTheThreads() async throws {
        let store = try RedisTestServer.makeStore { $0.commandTimeout = .seconds(2) }
        #expect(await store.rawCommand([Data("PING".utf8)]) == .status("PONG"))
        #expect(!store.hasStopped)
        // In flight while the store shuts down: a command Redis answers after 200 ms.
        let list = Data((store.configuration.keyPrefix + ":nothing").utf8)
        let inFlight = Task { await store.rawResult([Data("BLPOP".utf8), list, Data("0.2".utf8)]) }
        let observer = try RedisTestServer.makeStore()
        var blocked = false
        let clock = ContinuousClock()
        let deadline = clock.now + .seconds(5)
        while !blocked && clock.now < deadline {
            if case .string(let clients) = await observer.rawCommand([Data("CLIENT".utf8), Data("LIST".utf8)]) {
                blocked = String(decoding: clients, as: UTF8.self).contains("cmd=blpop")
            }
        }
        await observer.shutdown()
        try #require(blocked, "the BLPOP never reached Redis")
        await store.shutdown()
        #expect(store.hasStopped, "a connection thread is still running after shutdown()")
        // The command Redis was running finished with its own reply.
        #expect(try await inFlight.value.get() == .null)
        // New work fails at once, with the store's typed error.
        let (result, elapsed) = await timed { await store.rawResult([Data("PING".utf8)]) }
        if case .failure(let error) = result {
            #expect(error.code == .shutDown)
        } else {
            Issue.record("a command after shutdown() answered \(result)")
        }
        #expect(elapsed < .milliseconds(100))
        await #expect { try await store.variants(forPrimaryKey: Self.key.primary) } throws: {
            ($0 as? RedisStore.Error)?.code == .shutDown
        }
        await store.shutdown()
    }

    @Test func aStoreDroppedWithoutShutdownStillStopsItsThreads() async throws {
        var store: RedisStore? = try RedisTestServer.makeStore()
        #expect(await store?.rawCommand([Data("PING".utf8)]) == .status("PONG"))
        let threads = try #require(store?.connectionThreads)
        #expect(threads.contains { !$0.isFinished })
        store = nil
        #expect(await eventually(within: .seconds(5)) { threads.allSatisfy(\.isFinished) })
    }

    @Test func aCacheOnAStoreThatWasShutDownMissesAndStillAnswers() async throws {
        let store = try RedisTestServer.makeStore()
        await store.shutdown()
        let cache = try CacheHarness(store: store) { _, now in .cached("v", at: now, [("Cache-Control", "max-age=60")])
        }
        for _ in 0..<2 {
            let answer = try await cache.send()
            #expect(answer.status == .miss && answer.body == "v")
        }
        #expect(cache.requestCount == 2)
    }
}
