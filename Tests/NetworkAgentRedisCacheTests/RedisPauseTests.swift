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

/// A paused Redis (it accepts TCP, never answers) costs a request at most one command timeout, and while it is
/// known to be down requests skip it at once; the store finds it again in the background.
@Suite(.enabled(if: RedisTestServer.isAvailable, RedisTestServer.skipReason))
struct RedisPauseTests {
    static let commandTimeout = Duration.milliseconds(300)

    @Test func aPausedRedisCostsARequestAtMostOneCommandTimeout() async throws {
        let redis = try await PausableRedis.start()
        let store = try RedisStore(
            configuration: RedisStore.Configuration(
                url: try #require(redis.url),
                connectTimeout: Self.commandTimeout,
                commandTimeout: Self.commandTimeout,
                reconnectDelay: .milliseconds(50),
                maximumReconnectDelay: .milliseconds(200)
            )
        )
        let cache = try CacheHarness(store: store, cleanUp: store.cleanUp) { request, now in
            .cached("item \(request.path)", at: now, [("Cache-Control", "max-age=300")])
        }
        #expect(try await cache.send("/warm").status == .miss)
        #expect(try await cache.send("/warm").status == .hit)

        try redis.pause()
        var paused = true
        defer { if paused { try? redis.resume() } }
        // Misses in flight together: each makes three store calls (read, read before writing, write).
        let concurrent = try await withThrowingTaskGroup(of: Duration.self) { group in
            for index in 0..<4 {
                group.addTask {
                    let (answer, elapsed) = try await timed { try await cache.send("/paused/\(index)") }
                    #expect(answer.body == "item /paused/\(index)")
                    return elapsed
                }
            }
            return try await group.reduce(into: [Duration]()) { $0.append($1) }
        }
        // Before the circuit: 1.2–2.6 s each (every store call waited, reconnects ran back to back).
        #expect(concurrent.allSatisfy { $0 < .seconds(1) }, "requests through a paused Redis took \(concurrent)")
        // The store is known to be down: requests skip it at once.
        let (_, sequential) = try await timed {
            for index in 0..<5 {
                let answer = try await cache.send("/skipped/\(index)")
                #expect(answer.status == .miss && answer.body == "item /skipped/\(index)")
            }
        }
        #expect(sequential < .milliseconds(600), "five requests while Redis is known down took \(sequential)")

        try redis.resume()
        paused = false
        // The circuit re-probes in the background; no request pays for finding Redis again.
        var slowest = Duration.zero
        var hit = false
        let clock = ContinuousClock()
        let deadline = clock.now + .seconds(10)
        while !hit && clock.now < deadline {
            let (first, firstTime) = try await timed { try await cache.send("/after") }
            let (second, secondTime) = try await timed { try await cache.send("/after") }
            slowest = max(slowest, firstTime, secondTime)
            #expect(first.body == "item /after" && second.body == "item /after")
            hit = second.status == .hit
        }
        #expect(hit, "the store did not come back after Redis resumed")
        #expect(slowest < .seconds(1), "a request after the resume took \(slowest)")
    }

    /// A store call never holds a request past the request's own deadline, even when the store's command timeout
    /// is longer (issue 26, item 9: the endpoint's timeout covers store calls).
    @Test func aStoreCallEndsAtTheRequestsDeadline() async throws {
        let redis = try await PausableRedis.start()
        let store = try RedisStore(
            configuration: RedisStore.Configuration(url: try #require(redis.url), commandTimeout: .seconds(3))
        )
        let cache = try CacheHarness(store: store, cleanUp: store.cleanUp) { request, now in
            .cached("item \(request.path)", at: now, [("Cache-Control", "max-age=300")])
        }
        #expect(try await cache.send("/warm").status == .miss)
        try redis.pause()
        defer { try? redis.resume() }
        // The lookup waits for the request's 300 ms, not the store's 3 s; the fetch that follows has its own
        // deadline, and the write after it gives up at once (the request's deadline has passed).
        let (answer, elapsed) = try await timed { try await cache.send("/paused", timeout: .milliseconds(300)) }
        #expect(answer.status == .miss && answer.body == "item /paused")
        // Before: 3 s (the lookup waited out the command timeout).
        #expect(elapsed < .milliseconds(1_500), "a request with a 300 ms deadline took \(elapsed)")
    }
}
