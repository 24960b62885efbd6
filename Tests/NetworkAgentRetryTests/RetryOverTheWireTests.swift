import Foundation
import NetworkAgent
import NetworkAgentRetry
import NetworkAgentTestServer
import NetworkAgentTestSupport
import NetworkAgentTesting
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The retry plugin against the loopback server with the real transport of the run (`TestTransport.kind`). Each
/// test has its own transport: libcurl silently repeats a request once when a reused keep-alive connection dies before answering,
/// which would blur the attempt counts.
@Suite struct RetryOverTheWireTests {
    /// A server whose handler answers the n-th request (from 1) with `script(n)`.
    static func scriptedServer(
        closesConnections: Bool = false,
        _ script: @escaping @Sendable (Int) -> ServerResponse
    ) throws -> LoopbackServer {
        let count = Locked(0)
        return try LoopbackServer(closesConnections: closesConnections) { _ in
            script(
                count.withLock { count in
                    count += 1
                    return count
                }
            )
        }
    }

    static func provider(_ plugins: [any NetworkAgentPlugin]) -> NetworkAgentProvider<RetryEndpoint> {
        NetworkAgentProvider(plugins: plugins, agent: NetworkAgent(transport: TestTransport.make()))
    }

    @Test func scripted503sAreRetriedUntilTheServerAnswers() async throws {
        let server = try Self.scriptedServer { $0 < 3 ? .text("busy", status: 503) : .text("ok") }
        defer { server.stop() }
        let clock = ManualClock(advancesOnSleep: true)
        let inner = AttemptCounter()
        let provider = Self.provider([.retry(clock: clock), inner])
        let (data, response) = try await provider.request(endpoint: RetryEndpoint(baseURL: server.baseURL))
        #expect(response.status == 200)
        #expect(String(decoding: data, as: UTF8.self) == "ok")
        #expect(server.requestCount == 3)
        #expect(inner.attempts == 3)
        #expect(clock.sleeps.count == 2)
    }

    @Test func exhausted503sHandTheLastResponseToValidate() async throws {
        let server = try LoopbackServer { _ in .text("still busy", status: 503) }
        defer { server.stop() }
        let provider = Self.provider([.retry(clock: ManualClock(advancesOnSleep: true)), .validate()])
        let error = await #expect(throws: NetworkAgentError.self) {
            try await provider.request(endpoint: RetryEndpoint(baseURL: server.baseURL))
        }
        #expect(error?.code == .unacceptableStatus)
        #expect(error?.statusCode == 503)
        #expect(error?.data.map { String(decoding: $0, as: UTF8.self) } == "still busy")
        #expect(server.requestCount == RetryPlugin.defaultMaximumAttempts)
    }

    @Test func connectionResetsAreRetried() async throws {
        let server = try Self.scriptedServer { $0 < 3 ? ServerResponse(fault: .resetBeforeResponse) : .text("ok") }
        defer { server.stop() }
        let clock = ManualClock(advancesOnSleep: true)
        let log = EventRecorder()
        let provider = Self.provider([.retry(clock: clock)])
        let (data, _) = try await log.observing {
            try await provider.request(endpoint: RetryEndpoint(baseURL: server.baseURL))
        }
        #expect(String(decoding: data, as: UTF8.self) == "ok")
        #expect(server.requestCount == 3)
        #expect(
            log.events(from: "retry").map { $0.attributes["reason"] }
                == Array(repeating: "transport_network_connection_lost", count: 2)
        )
    }

    @Test func aConnectionClosedBeforeAnyResponseIsRetried() async throws {
        let server = try Self.scriptedServer { $0 == 1 ? ServerResponse(fault: .closeBeforeResponse) : .text("ok") }
        defer { server.stop() }
        let provider = Self.provider([.retry(clock: ManualClock(advancesOnSleep: true))])
        let (data, _) = try await provider.request(endpoint: RetryEndpoint(baseURL: server.baseURL))
        #expect(String(decoding: data, as: UTF8.self) == "ok")
        #expect(server.requestCount == 2)
    }

    @Test func aRefusedConnectionIsRetriedThenGivesUpSayingHowOften() async throws {
        let probe = try LoopbackServer { _ in .text("") }
        let closed = try #require(URL(string: "http://127.0.0.1:\(probe.port)"))
        probe.stop()

        let clock = ManualClock(advancesOnSleep: true)
        let log = EventRecorder()
        let provider = Self.provider([.retry(clock: clock)])
        let error = await #expect(throws: NetworkAgentError.self) {
            try await log.observing { try await provider.request(endpoint: RetryEndpoint(baseURL: closed)) }
        }
        #expect(error?.code == .transport)
        #expect(error?.urlErrorCode == .cannotConnectToHost)
        #expect(error?.message.contains("gave up after 3 attempts: maximum attempts reached") == true)
        #expect(clock.sleeps.count == 2)
        #expect(log.events(from: "retry").map(\.name) == ["retry_scheduled", "retry_scheduled", "retry_exhausted"])
    }

    @Test func aRefusedConnectionSucceedsOnceTheServerIsBack() async throws {
        let port = try unusedLoopbackPort()

        let started = Locked<LoopbackServer?>(nil)
        let startError = Locked<(any Error)?>(nil)
        // While the plugin sleeps its first backoff, the server comes up on the refused port; then the sleep ends.
        let clock = ManualClock()
        defer { started.withLock { $0?.stop() } }
        let provider = Self.provider([.retry(.init(maximumAttempts: 2), clock: clock)])
        let base = try #require(URL(string: "http://127.0.0.1:\(port)"))
        let call = Task { try await provider.request(endpoint: RetryEndpoint(baseURL: base)) }
        #expect(await eventually { clock.sleeperCount == 1 })
        do {
            let server = try LoopbackServer(port: port) { _ in .text("back") }
            started.withLock { $0 = server }
        } catch {
            startError.withLock { $0 = error }
        }
        clock.advance(by: .seconds(3_600))
        let (data, _) = try await call.value
        #expect(startError.withLock { $0 } == nil)
        #expect(String(decoding: data, as: UTF8.self) == "back")
        #expect(started.withLock { $0?.requestCount } == 1)
    }

    @Test func anAttemptThatMissesItsDeadlineIsRetried() async throws {
        let server = try Self.scriptedServer { $0 == 1 ? ServerResponse(fault: .stall) : .text("ok") }
        defer { server.stop() }
        let provider = Self.provider([.retry(clock: ManualClock(advancesOnSleep: true))])
        // The deadline is per attempt: the stalled first attempt uses all of it, the second must answer within it.
        // Two seconds keeps a loaded two-core machine under Thread Sanitizer well inside, at the cost of the wait.
        let endpoint = RetryEndpoint(baseURL: server.baseURL, timeout: .seconds(2))
        let (data, _) = try await provider.request(endpoint: endpoint)
        #expect(String(decoding: data, as: UTF8.self) == "ok")
        #expect(server.requestCount == 2)
    }

    // MARK: - Retry-After

    @Test func retryAfterDelaySecondsOverTheWire() async throws {
        let server = try Self.scriptedServer {
            $0 == 1 ? .text("wait", status: 429, headers: [("Retry-After", "4")]) : .text("ok")
        }
        defer { server.stop() }
        let clock = ManualClock(advancesOnSleep: true)
        let provider = Self.provider([.retry(clock: clock)])
        let (data, _) = try await provider.request(endpoint: RetryEndpoint(baseURL: server.baseURL))
        #expect(String(decoding: data, as: UTF8.self) == "ok")
        #expect(clock.sleeps == [.seconds(4)])
    }

    @Test func retryAfterHTTPDateOverTheWire() async throws {
        // The manual clock's date is Sun, 06 Nov 1994 08:49:37 GMT.
        let server = try Self.scriptedServer {
            $0 == 1
                ? .text("down", status: 503, headers: [("Retry-After", "Sun, 06 Nov 1994 08:49:46 GMT")])
                : .text("ok")
        }
        defer { server.stop() }
        let clock = ManualClock(advancesOnSleep: true)
        let provider = Self.provider([.retry(clock: clock, now: { clock.date })])
        let (data, _) = try await provider.request(endpoint: RetryEndpoint(baseURL: server.baseURL))
        #expect(String(decoding: data, as: UTF8.self) == "ok")
        #expect(clock.sleeps == [.seconds(9)])
    }

    @Test func aRetryAfterOfAnHourFailsFastWithTheServersAnswer() async throws {
        let server = try LoopbackServer { _ in .text("come back later", status: 503, headers: [("Retry-After", "3600")])
        }
        defer { server.stop() }
        let provider = Self.provider([.retry()])  // the real clock
        let started = ContinuousClock.now
        let (data, response) = try await provider.request(endpoint: RetryEndpoint(baseURL: server.baseURL))
        #expect(ContinuousClock.now - started < .seconds(60), "the server asked for an hour; the plugin must not wait")
        #expect(response.status == 503)
        #expect(String(decoding: data, as: UTF8.self) == "come back later")
        #expect(server.requestCount == 1)
    }

    // MARK: - Idempotency

    @Test func aPostWithoutAKeyIsNeverRetried() async throws {
        let busy = try LoopbackServer { _ in .text("busy", status: 503) }
        defer { busy.stop() }
        let resetting = try LoopbackServer { _ in ServerResponse(fault: .resetBeforeResponse) }
        defer { resetting.stop() }
        let clock = ManualClock(advancesOnSleep: true)
        let provider = Self.provider([.retry(clock: clock)])

        var endpoint = RetryEndpoint(
            baseURL: busy.baseURL,
            method: .post,
            task: .requestWithoutAttributes(content: "x")
        )
        let (_, response) = try await provider.request(endpoint: endpoint)
        #expect(response.status == 503)
        #expect(busy.requestCount == 1)

        endpoint.baseURL = resetting.baseURL
        let error = await #expect(throws: NetworkAgentError.self) { try await provider.request(endpoint: endpoint) }
        #expect(error?.urlErrorCode == .networkConnectionLost)
        #expect(resetting.requestCount == 1)
        #expect(clock.sleeps.isEmpty)
    }

    @Test func aPostWithAKeyIsRetriedWithTheSameKeyAndBodyOnTheWire() async throws {
        // One connection per request: when a reused keep-alive connection is reset before answering, libcurl sends
        // the request again by itself on a new connection, without its body, and that attempt hangs until its
        // deadline (a transport issue, not the plugin's).
        let server = try Self.scriptedServer(closesConnections: true) {
            switch $0 {
            case 1: .text("busy", status: 503)
            case 2: ServerResponse(fault: .resetBeforeResponse)
            default: .text("created", status: 201)
            }
        }
        defer { server.stop() }
        var endpoint = RetryEndpoint(
            baseURL: server.baseURL,
            method: .post,
            task: .requestWithoutAttributes(content: ["name": "widget"])
        )
        endpoint.headers["Idempotency-Key"] = "\"order-17\""
        let provider = Self.provider([.retry(clock: ManualClock(advancesOnSleep: true))])
        let (_, response) = try await provider.request(endpoint: endpoint)
        #expect(response.status == 201)
        let requests = server.requests
        #expect(requests.count == 3)
        #expect(requests.map { $0.header("Idempotency-Key") } == Array(repeating: "\"order-17\"", count: 3))
        #expect(requests.allSatisfy { $0.method == "POST" && $0.bodyText == #"{"name":"widget"}"# })
    }

    @Test func addIdempotencyKeyGivesEachCallOneFreshKeyForAllItsAttempts() async throws {
        let server = try Self.scriptedServer { $0 % 2 == 1 ? .text("busy", status: 503) : .text("ok") }
        defer { server.stop() }
        let provider = Self.provider([
            .retry(.init(nonIdempotentMethods: .addIdempotencyKey), clock: ManualClock(advancesOnSleep: true))
        ])
        let endpoint = RetryEndpoint(
            baseURL: server.baseURL,
            method: .patch,
            task: .requestWithoutAttributes(content: "x")
        )
        _ = try await provider.request(endpoint: endpoint)
        _ = try await provider.request(endpoint: endpoint)
        let keys = server.requests.map { $0.header("Idempotency-Key") }
        #expect(keys.count == 4)
        #expect(keys[0] != nil && keys[0] == keys[1])
        #expect(keys[2] != nil && keys[2] == keys[3])
        #expect(keys[0] != keys[2])
        // A quoted UUID: a Structured Field string, as the Idempotency-Key draft asks.
        let key = try #require(keys[0])
        #expect(key.hasPrefix("\"") && key.hasSuffix("\""))
        #expect(UUID(uuidString: String(key.dropFirst().dropLast())) != nil)
    }

    @Test func addIdempotencyKeyKeepsAKeyTheCallerSet() async throws {
        let server = try Self.scriptedServer { $0 == 1 ? .text("busy", status: 503) : .text("ok") }
        defer { server.stop() }
        var endpoint = RetryEndpoint(
            baseURL: server.baseURL,
            method: .post,
            task: .requestWithoutAttributes(content: "x")
        )
        endpoint.headers["Idempotency-Key"] = "mine"
        let provider = Self.provider([
            .retry(.init(nonIdempotentMethods: .addIdempotencyKey), clock: ManualClock(advancesOnSleep: true))
        ])
        _ = try await provider.request(endpoint: endpoint)
        #expect(server.requests.map { $0.header("Idempotency-Key") } == ["mine", "mine"])
    }

    @Test func onResponseSeesTheLastRequestSentWithItsKey() async throws {
        let server = try Self.scriptedServer { $0 == 1 ? .text("busy", status: 503) : .text("ok") }
        defer { server.stop() }
        let last = OnResponseSpy()
        let provider = Self.provider([
            .retry(
                .init(nonIdempotentMethods: .addIdempotencyKey),
                clock: ManualClock(advancesOnSleep: true),
                idempotencyKey: { "k-1" }
            ),
            last,
        ])
        let endpoint = RetryEndpoint(
            baseURL: server.baseURL,
            method: .post,
            task: .requestWithoutAttributes(content: "x")
        )
        _ = try await provider.request(endpoint: endpoint)
        #expect(last.lastRequest?.value(forHTTPHeaderField: "Idempotency-Key") == "k-1")
    }
}
