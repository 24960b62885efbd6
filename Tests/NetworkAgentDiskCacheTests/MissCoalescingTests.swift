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

/// Collapsed forwarding in one process: concurrent misses of one resource make one origin request, and the requests
/// waiting for it never fail or wait past the bound because of it.
@Suite struct MissCoalescingTests {
    /// What one request of a burst got, in a form a task group can return.
    struct Outcome: Sendable {
        var body: String?
        var status: CacheStatus?
        var failure: String?
        var elapsed: Duration

        /// Whether the request got `body` with `status`.
        func got(_ expected: String, _ expectedStatus: CacheStatus) -> Bool {
            body == expected && status == expectedStatus
        }
    }

    /// Sends a request through the cache and says what it got and how long it took.
    static func send(
        _ cache: CacheHarness,
        headers: [String: String] = [:],
        stream: Bool = false
    ) async -> Outcome {
        let clock = ContinuousClock()
        let start = clock.now
        do {
            let answer: CacheAnswer
            if stream {
                answer = try await cache.stream(headers: headers)
            } else {
                answer = try await cache.send(headers: headers)
            }
            return Outcome(body: answer.body, status: answer.status, elapsed: clock.now - start)
        } catch {
            return Outcome(failure: "\(error)", elapsed: clock.now - start)
        }
    }

    /// Sends the requests at once, one per element of `headers`.
    static func burst(_ cache: CacheHarness, _ headers: [[String: String]]) async -> [Outcome] {
        await withTaskGroup(of: Outcome.self) { group in
            for fields in headers { group.addTask { await send(cache, headers: fields) } }
            return await group.reduce(into: []) { $0.append($1) }
        }
    }

    /// Sends one request (the leader), and once the origin has it, `waiters` more; returns the leader's task (to
    /// cancel or await) and the waiters' task, started once the leader is at the origin.
    static func leaderThenWaiters(
        _ cache: CacheHarness,
        waiters: Int,
        headers: [String: String] = [:]
    ) async throws -> (leader: Task<Outcome, Never>, waiters: Task<[Outcome], Never>) {
        let leader = Task { await send(cache, headers: headers) }
        #expect(await eventually(within: .seconds(5)) { cache.requestCount == 1 })
        let rest = Task { await burst(cache, Array(repeating: headers, count: waiters)) }
        return (leader, rest)
    }

    /// An origin that answers its first request with `first` and the others with a fresh `up`.
    static func origin(
        first: @escaping @Sendable (Date) -> ServerResponse,
        configure: (inout DiskCachePlugin.Configuration) -> Void = { _ in }
    ) throws -> CacheHarness {
        let seen = Locked(0)
        return try CacheHarness(configure: configure) { _, now in
            let index = seen.withLock { count in
                count += 1
                return count
            }
            return index == 1 ? first(now) : .cached("up", at: now, [("Cache-Control", "max-age=600")])
        }
    }

    /// `response`, answered after `delay`.
    static func delayed(_ response: ServerResponse, by delay: Duration) -> ServerResponse {
        var delayed = response
        delayed.delay = delay
        return delayed
    }

    /// The `miss` events whose `coalesced` attribute is `value`.
    static func fallThroughs(_ cache: CacheHarness, _ value: String) -> Int {
        cache.recorder.events(from: DiskCachePlugin.eventSource, named: "miss")
            .filter { $0.attributes["coalesced"] == value }.count
    }

    @Test func aHundredConcurrentColdMissesMakeOneOriginRequest() async throws {
        let cache = try CacheHarness { _, now in
            Self.delayed(.cached("cold", at: now, [("Cache-Control", "max-age=600")]), by: .milliseconds(200))
        }
        let outcomes = await Self.burst(cache, Array(repeating: [:], count: 100))
        #expect(cache.requestCount == 1)
        #expect(outcomes.allSatisfy { $0.body == "cold" }, "\(outcomes.compactMap(\.failure))")
        #expect(outcomes.filter { $0.status == .miss }.count == 1)
        #expect(outcomes.filter { $0.status == .hit }.count == 99)
        let coalesced = cache.recorder.events(from: DiskCachePlugin.eventSource, named: "hit")
            .filter { $0.attributes["coalesced"] == "true" }
        #expect(!coalesced.isEmpty)
        #expect(cache.plugin.stats.misses == 1)
    }

    @Test func waitersOfANonStorableAnswerFetchForThemselvesAtOnce() async throws {
        let seen = Locked(0)
        let cache = try CacheHarness(configure: { $0.missWaitLimit = .seconds(5) }) { _, now in
            let first = seen.withLock { count in
                count += 1
                return count == 1
            }
            return Self.delayed(
                .cached("private", at: now, [("Cache-Control", "no-store")]),
                by: .milliseconds(first ? 500 : 0)
            )
        }
        let (leader, waiters) = try await Self.leaderThenWaiters(cache, waiters: 9)
        #expect(await eventually(within: .seconds(5)) { cache.plugin.missWaiterCount == 9 })
        let outcomes = await waiters.value
        #expect(await leader.value.body == "private")
        // They fetched as soon as the leader's answer turned out not stored, not at the bound.
        #expect(outcomes.allSatisfy { $0.got("private", .miss) }, "\(outcomes)")
        #expect(outcomes.allSatisfy { $0.elapsed < .seconds(2) }, "\(outcomes.map(\.elapsed))")
        #expect(Self.fallThroughs(cache, "not_usable") == 9)
        #expect(cache.requestCount == 10)
    }

    @Test func afterANonStorableAnswerMissesOfThatResourceNoLongerWait() async throws {
        // Requests 1 (the leader) and 2 (its waiter's own) are answered after 300 ms, 3 never, the others at once.
        let seen = Locked(0)
        let cache = try CacheHarness { _, now in
            let index = seen.withLock { count in
                count += 1
                return count
            }
            var response = ServerResponse.cached("private", at: now, [("Cache-Control", "no-store")])
            if index == 1 { response.delay = .milliseconds(300) }
            if index == 3 { response.fault = .stall }
            return response
        }
        let (leader, waiters) = try await Self.leaderThenWaiters(cache, waiters: 1)
        #expect(await eventually(within: .seconds(5)) { cache.plugin.missWaiterCount == 1 })
        _ = await (leader.value, waiters.value)
        // The next misses go to the origin at once, although one of them is still there.
        let stalled = Task { await Self.send(cache) }
        #expect(await eventually(within: .seconds(5)) { cache.requestCount == 3 })
        let next = await Self.send(cache)
        #expect(next.got("private", .miss))
        #expect(next.elapsed < .seconds(1))
        #expect(cache.plugin.missWaiterCount == 0)
        stalled.cancel()
        _ = await stalled.value
    }

    @Test func waitersOfAServerErrorFetchForThemselves() async throws {
        let cache = try Self.origin(first: { now in
            Self.delayed(.cached("down", status: 500, at: now), by: .milliseconds(500))
        })
        let (leader, waiters) = try await Self.leaderThenWaiters(cache, waiters: 9)
        #expect(await eventually(within: .seconds(5)) { cache.plugin.missWaiterCount == 9 })
        let outcomes = await waiters.value
        #expect(await leader.value.body == "down")
        #expect(outcomes.allSatisfy { $0.body == "up" }, "\(outcomes.compactMap(\.failure))")
        // Each fetched for itself, unless another waiter's own response was stored before it looked.
        let coalescedHits = cache.recorder.events(from: DiskCachePlugin.eventSource, named: "hit")
            .filter { $0.attributes["coalesced"] == "true" }.count
        #expect(Self.fallThroughs(cache, "not_usable") + coalescedHits == 9)
        #expect(Self.fallThroughs(cache, "not_usable") >= 1)
    }

    @Test func waitersOfADroppedConnectionFetchForThemselves() async throws {
        let cache = try Self.origin(first: { _ in
            ServerResponse(status: 200, delay: .milliseconds(500), fault: .closeBeforeResponse)
        })
        let (leader, waiters) = try await Self.leaderThenWaiters(cache, waiters: 9)
        #expect(await eventually(within: .seconds(5)) { cache.plugin.missWaiterCount == 9 })
        let outcomes = await waiters.value
        #expect(await leader.value.failure != nil)
        #expect(outcomes.allSatisfy { $0.body == "up" }, "\(outcomes.compactMap(\.failure))")
        #expect(Self.fallThroughs(cache, "leader_failed") == 9)
    }

    @Test func aCancelledLeaderHandsOverToOneWaiter() async throws {
        let cache = try Self.origin(first: { _ in ServerResponse(status: 200, fault: .stall) })
        let (leader, waiters) = try await Self.leaderThenWaiters(cache, waiters: 9)
        #expect(await eventually(within: .seconds(5)) { cache.plugin.missWaiterCount == 9 })
        leader.cancel()
        let outcomes = await waiters.value
        #expect(await leader.value.failure != nil)
        #expect(outcomes.allSatisfy { $0.body == "up" }, "\(outcomes.compactMap(\.failure))")
        // One waiter fetched in the cancelled leader's place, the others got what it stored.
        #expect(outcomes.filter { $0.status == .miss }.count == 1)
        #expect(outcomes.filter { $0.status == .hit }.count == 8)
        #expect(cache.requestCount == 2)
    }

    @Test func aSlowOriginHoldsWaitersNoLongerThanTheBound() async throws {
        let bound = Duration.milliseconds(300)
        let cache = try Self.origin(first: { _ in ServerResponse(status: 200, fault: .stall) }) {
            $0.missWaitLimit = bound
        }
        let (leader, waiters) = try await Self.leaderThenWaiters(cache, waiters: 9)
        let outcomes = await waiters.value
        leader.cancel()
        _ = await leader.value
        #expect(outcomes.allSatisfy { $0.body == "up" }, "\(outcomes.compactMap(\.failure))")
        #expect(outcomes.allSatisfy { (bound..<bound + .seconds(1)).contains($0.elapsed) }, "\(outcomes)")
        #expect(Self.fallThroughs(cache, "timeout") == 9)
        #expect(cache.recorder.count(from: DiskCachePlugin.eventSource, named: "coalescing_timeout") == 9)
    }

    @Test func eachCredentialGetsItsOwnFetch() async throws {
        let cache = try CacheHarness { request, now in
            Self.delayed(
                .cached(
                    "profile of \(request.header("Authorization") ?? "nobody")",
                    at: now,
                    [("Cache-Control", "private, max-age=600")]
                ),
                by: .milliseconds(200)
            )
        }
        let alice = ["Authorization": "Bearer alice"]
        let bob = ["Authorization": "Bearer bob"]
        let outcomes = await Self.burst(cache, Array(repeating: alice, count: 20) + Array(repeating: bob, count: 20))
        #expect(cache.requestCount == 2)
        #expect(outcomes.filter { $0.body == "profile of Bearer alice" }.count == 20)
        #expect(outcomes.filter { $0.body == "profile of Bearer bob" }.count == 20)
    }

    @Test func waitersTheStoredVariantDoesNotMatchFetchForThemselves() async throws {
        let cache = try CacheHarness { request, now in
            let language = request.header("Accept-Language") ?? "none"
            return Self.delayed(
                .cached(
                    "text in \(language)",
                    at: now,
                    [("Cache-Control", "max-age=600"), ("Vary", "Accept-Language")]
                ),
                by: .milliseconds(language == "en" ? 500 : 0)
            )
        }
        let leader = Task { await Self.send(cache, headers: ["Accept-Language": "en"]) }
        #expect(await eventually(within: .seconds(5)) { cache.requestCount == 1 })
        let english = Array(repeating: ["Accept-Language": "en"], count: 4)
        let germans = Array(repeating: ["Accept-Language": "de"], count: 4)
        let burst = Task { await Self.burst(cache, english + germans) }
        #expect(await eventually(within: .seconds(5)) { cache.plugin.missWaiterCount == 8 })
        let outcomes = await burst.value
        #expect(await leader.value.body == "text in en")
        #expect(outcomes.filter { $0.got("text in en", .hit) }.count == 4)
        // Each German request fetched for itself, unless another one's response was stored before it looked.
        let german = outcomes.filter { $0.body == "text in de" }
        #expect(german.count == 4)
        #expect(Self.fallThroughs(cache, "not_usable") == german.filter { $0.status == .miss }.count)
        #expect(cache.requestCount == 1 + german.filter { $0.status == .miss }.count)
    }

    @Test func aNoCacheRequestDoesNotWait() async throws {
        let cache = try Self.origin(first: { _ in ServerResponse(status: 200, fault: .stall) })
        let leader = Task { await Self.send(cache) }
        #expect(await eventually(within: .seconds(5)) { cache.requestCount == 1 })
        let fresh = await Self.send(cache, headers: ["Cache-Control": "no-cache"])
        #expect(fresh.body == "up")
        #expect(fresh.status == .miss)
        #expect(fresh.elapsed < .seconds(1))
        leader.cancel()
        _ = await leader.value
    }

    @Test func aStreamedRequestNeverFetchesForOthers() async throws {
        let cache = try Self.origin(first: { _ in ServerResponse(status: 200, fault: .stall) })
        // A stream's body goes to its caller, not to the store: a buffered request does not wait for it.
        let stream = Task { await Self.send(cache, stream: true) }
        #expect(await eventually(within: .seconds(5)) { cache.requestCount == 1 })
        let buffered = await Self.send(cache)
        #expect(buffered.got("up", .miss))
        #expect(buffered.elapsed < .seconds(1))
        stream.cancel()
        _ = await stream.value
    }

    @Test func aStreamWaitingForABufferedRequestIsAnsweredFromTheStore() async throws {
        let cache = try CacheHarness { _, now in
            Self.delayed(.cached("stored", at: now, [("Cache-Control", "max-age=600")]), by: .milliseconds(300))
        }
        let leader = Task { await Self.send(cache) }
        #expect(await eventually(within: .seconds(5)) { cache.requestCount == 1 })
        let waiter = Task { await Self.send(cache, stream: true) }
        #expect(await eventually(within: .seconds(5)) { cache.plugin.missWaiterCount == 1 })
        #expect(await leader.value.body == "stored")
        let streamed = await waiter.value
        #expect(streamed.got("stored", .hit))
        #expect(cache.requestCount == 1)
    }
}
