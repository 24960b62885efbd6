import Foundation
import NetworkAgent
import NetworkAgentRetry
import NetworkAgentTestSupport
import NetworkAgentTesting
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The backoff schedule, the time budget and `Retry-After`, in virtual time against a stub transport.
@Suite struct RetryScheduleTests {
    /// Calls a provider whose transport answers with `responses` in turn (the last repeats).
    func call(
        _ plugin: RetryPlugin,
        responses: [StubTransport.Response],
        inner: AttemptCounter = AttemptCounter(),
        endpoint: RetryEndpoint = .stubbed
    ) async throws -> (response: URLResponse, attempts: Int, events: [NetworkAgentEvent]) {
        let stub = StubTransport()
        stub.stub(matching: { _ in true }, with: responses)
        let provider = NetworkAgentProvider<RetryEndpoint>(
            plugins: [plugin, inner],
            agent: NetworkAgent(transport: stub)
        )
        let log = EventRecorder()
        let (_, response) = try await log.observing { try await provider.request(endpoint: endpoint) }
        return (response, stub.requests.count, log.events(from: "retry"))
    }

    @Test func fullJitterWithAFixedRandomValueHalvesEachExponentialDelay() async throws {
        let clock = ManualClock(advancesOnSleep: true)
        let policy = RetryPlugin.Policy(
            maximumAttempts: 5,
            baseDelay: .milliseconds(100),
            multiplier: 2,
            maximumDelay: .seconds(1),
            jitter: .full
        )
        let result = try await call(.retry(policy, clock: clock, random: { 0.5 }), responses: [.status(503)])
        #expect(clock.sleeps == [.milliseconds(50), .milliseconds(100), .milliseconds(200), .milliseconds(400)])
        #expect(result.attempts == 5)
        #expect(result.response.status == 503)
        #expect(
            result.events.filter { $0.name == "retry_scheduled" }.map { $0.attributes["delay_ms"] } == [
                "50", "100", "200", "400",
            ]
        )
        // The same delays as typed values, for observers such as the metrics plugin.
        let delays = result.events.compactMap { event -> Duration? in
            guard case .retryScheduled(let delay) = event.kind else { return nil }
            return delay
        }
        #expect(delays == [.milliseconds(50), .milliseconds(100), .milliseconds(200), .milliseconds(400)])
    }

    @Test func withoutJitterTheDelaysGrowByTheMultiplierUpToTheMaximum() async throws {
        let clock = ManualClock(advancesOnSleep: true)
        let policy = RetryPlugin.Policy(
            maximumAttempts: 6,
            baseDelay: .milliseconds(100),
            multiplier: 3,
            maximumDelay: .seconds(1),
            jitter: .none
        )
        _ = try await call(.retry(policy, clock: clock), responses: [.status(500)])
        #expect(
            clock.sleeps == [
                .milliseconds(100), .milliseconds(300), .milliseconds(900), .milliseconds(1000), .milliseconds(1000),
            ]
        )
    }

    @Test func decorrelatedJitterGrowsEachDelayFromThePreviousOne() async throws {
        let clock = ManualClock(advancesOnSleep: true)
        let policy = RetryPlugin.Policy(
            maximumAttempts: 6,
            baseDelay: .milliseconds(100),
            multiplier: 3,
            maximumDelay: .seconds(1),
            jitter: .decorrelated
        )
        _ = try await call(.retry(policy, clock: clock, random: { 0.5 }), responses: [.status(502)])
        // base + 0.5 × (min window end − base), where the window ends at 3 × the previous delay.
        #expect(
            clock.sleeps == [
                .milliseconds(200), .milliseconds(350), .milliseconds(575), .microseconds(912_500), .seconds(1),
            ]
        )
    }

    @Test func aSeededRandomSourceGivesTheSameScheduleEveryTimeWithinTheWindow() async throws {
        let policy = RetryPlugin.Policy(maximumAttempts: 8, baseDelay: .milliseconds(100), maximumDelay: .seconds(2))
        var schedules: [[Duration]] = []
        for _ in 0..<2 {
            let clock = ManualClock(advancesOnSleep: true)
            let random = SeededRandom(seed: 42)
            _ = try await call(.retry(policy, clock: clock, random: random.unit), responses: [.status(503)])
            schedules.append(clock.sleeps)
        }
        #expect(schedules[0] == schedules[1])
        #expect(schedules[0].count == 7)
        let windows: [Duration] = [100, 200, 400, 800, 1600, 2000, 2000].map { .milliseconds($0) }
        for (delay, window) in zip(schedules[0], windows) {
            #expect(delay >= .zero && delay <= window)
        }
        #expect(Set(schedules[0]).count > 1)
    }

    @Test func randomValuesOutsideZeroToOneAreClamped() async throws {
        let policy = RetryPlugin.Policy(maximumAttempts: 2, baseDelay: .milliseconds(100))
        let high = ManualClock(advancesOnSleep: true)
        _ = try await call(.retry(policy, clock: high, random: { 7 }), responses: [.status(503)])
        #expect(high.sleeps == [.milliseconds(100)])
        // A zero delay retries at once, without sleeping.
        let low = ManualClock(advancesOnSleep: true)
        let result = try await call(.retry(policy, clock: low, random: { -1 }), responses: [.status(503)])
        #expect(low.sleeps.isEmpty)
        #expect(result.attempts == 2)
        #expect(result.events.first?.attributes["delay_ms"] == "0")
    }

    @Test func noAttemptStartsWhenItsDelayWouldEndAfterTheTimeBudget() async throws {
        let clock = ManualClock(advancesOnSleep: true)
        let policy = RetryPlugin.Policy(
            maximumAttempts: 10,
            baseDelay: .milliseconds(300),
            multiplier: 2,
            maximumDelay: .seconds(10),
            jitter: .none,
            timeBudget: .seconds(1)
        )
        // Each attempt takes 100 ms: attempt 1 ends at 100 ms, a 300 ms delay ends at 400 ms (inside the budget);
        // attempt 2 ends at 500 ms, and a 600 ms delay would end at 1100 ms.
        let inner = AttemptCounter(clock: clock, duration: .milliseconds(100))
        let result = try await call(.retry(policy, clock: clock), responses: [.status(503)], inner: inner)
        #expect(clock.sleeps == [.milliseconds(300)])
        #expect(result.attempts == 2)
        #expect(result.response.status == 503)
        let exhausted = try #require(result.events.last)
        #expect(exhausted.name == "retry_exhausted")
        #expect(exhausted.attributes == ["attempts": "2", "reason": "status_503", "stop": "time_budget"])
    }

    @Test func aNilBudgetNeverStopsTheRetries() async throws {
        let clock = ManualClock(advancesOnSleep: true)
        let policy = RetryPlugin.Policy(maximumAttempts: 4, baseDelay: .seconds(100), jitter: .none, timeBudget: nil)
        let result = try await call(.retry(policy, clock: clock), responses: [.status(503)])
        #expect(result.attempts == 4)
    }

    @Test func retriesStopAtTheMaximumAttemptsWithTheLastResponse() async throws {
        let clock = ManualClock(advancesOnSleep: true)
        let stub = StubTransport()
        stub.stub(
            matching: { _ in true },
            with: [.status(503), .status(502), .init(statusCode: 504, body: Data("last".utf8))]
        )
        let provider = NetworkAgentProvider<RetryEndpoint>(
            plugins: [.retry(.init(maximumAttempts: 3), clock: clock)],
            agent: NetworkAgent(transport: stub)
        )
        let log = EventRecorder()
        let (data, response) = try await log.observing { try await provider.request(endpoint: .stubbed) }
        #expect(response.status == 504)
        #expect(String(decoding: data, as: UTF8.self) == "last")
        #expect(log.events(from: "retry").map(\.name) == ["retry_scheduled", "retry_scheduled", "retry_exhausted"])
        #expect(
            log.events(from: "retry").map { $0.attributes["reason"] } == ["status_503", "status_502", "status_504"]
        )
        #expect(log.events(from: "retry").last?.attributes["stop"] == "maximum_attempts")
        #expect(log.events(from: "retry").first?.attributes["attempt"] == "1")
        #expect(log.events(from: "retry").first?.attributes["delay_source"] == "backoff")
    }

    @Test(arguments: [0, 1])
    func oneOrFewerMaximumAttemptsTurnsRetriesOff(_ maximumAttempts: Int) async throws {
        let clock = ManualClock(advancesOnSleep: true)
        let result = try await call(
            .retry(.init(maximumAttempts: maximumAttempts), clock: clock),
            responses: [.status(503)]
        )
        #expect(result.attempts == 1)
        #expect(clock.sleeps.isEmpty)
    }

    @Test(arguments: [400, 401, 403, 404, 409, 422, 501, 505])
    func otherStatusesAreReturnedAtOnce(_ status: Int) async throws {
        let clock = ManualClock(advancesOnSleep: true)
        let result = try await call(.retry(clock: clock), responses: [.status(status), .status(200)])
        #expect(result.response.status == status)
        #expect(result.attempts == 1)
        #expect(result.events.isEmpty)
    }

    @Test func theRetryableStatusesAreConfigurable() async throws {
        let clock = ManualClock(advancesOnSleep: true)
        let policy = RetryPlugin.Policy(retryableStatusCodes: [404])
        let notFound = try await call(.retry(policy, clock: clock), responses: [.status(404), .status(200)])
        #expect(notFound.response.status == 200)
        let unavailable = try await call(.retry(policy, clock: clock), responses: [.status(503), .status(200)])
        #expect(unavailable.response.status == 503)
    }

    // MARK: - Retry-After

    @Test func retryAfterDelaySecondsReplacesTheBackoffOn503And429() async throws {
        for status in [503, 429] {
            let clock = ManualClock(advancesOnSleep: true)
            let result = try await call(
                .retry(clock: clock, random: { 0 }),
                responses: [.init(statusCode: status, headers: ["Retry-After": "2"]), .status(200)]
            )
            #expect(result.response.status == 200)
            #expect(clock.sleeps == [.seconds(2)])
            #expect(result.events.first?.attributes["delay_source"] == "retry_after")
            #expect(result.events.first?.attributes["delay_ms"] == "2000")
        }
    }

    @Test func retryAfterHTTPDateIsMeasuredFromTheClocksDate() async throws {
        let clock = ManualClock(advancesOnSleep: true)
        clock.advance(by: .seconds(3))  // now: Sun, 06 Nov 1994 08:49:40 GMT
        let result = try await call(
            .retry(clock: clock, random: { 0 }, now: { clock.date }),
            responses: [
                .init(statusCode: 503, headers: ["Retry-After": "Sun, 06 Nov 1994 08:49:47 GMT"]), .status(200),
            ]
        )
        #expect(result.response.status == 200)
        #expect(clock.sleeps == [.seconds(7)])
    }

    @Test func retryAfterIsIgnoredOnOtherStatusesAndWhenMalformed() async throws {
        for (status, value) in [(500, "2"), (503, "soon"), (503, "-1"), (503, "1.5")] {
            let clock = ManualClock(advancesOnSleep: true)
            _ = try await call(
                .retry(.init(baseDelay: .milliseconds(100), jitter: .none), clock: clock),
                responses: [.init(statusCode: status, headers: ["Retry-After": value]), .status(200)]
            )
            #expect(clock.sleeps == [.milliseconds(100)], "status \(status), Retry-After \(value)")
        }
    }

    @Test func retryAfterLongerThanTheMaximumDelayReturnsTheServersAnswerWithoutWaiting() async throws {
        let clock = ManualClock(advancesOnSleep: true)
        let result = try await call(
            .retry(clock: clock),
            responses: [.init(statusCode: 503, headers: ["Retry-After": "3600"]), .status(200)]
        )
        #expect(result.response.status == 503)
        #expect((result.response as? HTTPURLResponse)?.value(forHTTPHeaderField: "Retry-After") == "3600")
        #expect(result.attempts == 1)
        #expect(clock.sleeps.isEmpty)
        #expect(result.events.map(\.name) == ["retry_exhausted"])
        #expect(
            result.events.first?.attributes == [
                "attempts": "1", "reason": "status_503", "stop": "retry_after_too_long", "retry_after_ms": "3600000",
            ]
        )
    }

    @Test func retryAfterBeyondTheTimeBudgetReturnsTheServersAnswerWithoutWaiting() async throws {
        let clock = ManualClock(advancesOnSleep: true)
        let policy = RetryPlugin.Policy(maximumDelay: .seconds(60), timeBudget: .seconds(10))
        let result = try await call(
            .retry(policy, clock: clock),
            responses: [.init(statusCode: 429, headers: ["Retry-After": "20"]), .status(200)]
        )
        #expect(result.response.status == 429)
        #expect(clock.sleeps.isEmpty)
        #expect(result.events.first?.attributes["stop"] == "retry_after_too_long")
    }

    // MARK: - Errors

    @Test func exhaustedOnAnErrorKeepsTheErrorAndSaysHowManyAttemptsAndWhy() async throws {
        let clock = ManualClock(advancesOnSleep: true)
        let log = EventRecorder()
        let error = await #expect(throws: NetworkAgentError.self) {
            try await log.observing {
                try await self.call(.retry(clock: clock), responses: [.connectionRefused])
            }
        }
        #expect(error?.code == .transport)
        #expect(error?.urlErrorCode == .cannotConnectToHost)
        #expect(error?.message.hasSuffix("[retry: gave up after 3 attempts: maximum attempts reached]") == true)
        #expect(clock.sleeps.count == 2)
        #expect(
            log.events(from: "retry").last?.attributes == [
                "attempts": "3", "reason": "transport_cannot_connect_to_host", "stop": "maximum_attempts",
            ]
        )
    }

    @Test func aTimedOutAttemptIsRetriedUnlessTurnedOff() async throws {
        let timeout = StubTransport.Response.failure(NetworkAgentError(.timedOut, "too slow"))
        let retried = try await call(
            .retry(clock: ManualClock(advancesOnSleep: true)),
            responses: [timeout, .status(200)]
        )
        #expect(retried.response.status == 200)
        #expect(retried.events.first?.attributes["reason"] == "timed_out")

        let error = await #expect(throws: NetworkAgentError.self) {
            try await self.call(
                .retry(.init(retriesTimeouts: false), clock: ManualClock(advancesOnSleep: true)),
                responses: [timeout]
            )
        }
        #expect(error?.code == .timedOut)
        #expect(error?.message == "too slow")
    }

    @Test(arguments: [
        NetworkAgentError(.cancelled, "the request was cancelled"),
        NetworkAgentError(.transport, "tls", underlying: URLError(.secureConnectionFailed)),
        NetworkAgentError(.transport, "cert", underlying: URLError(.serverCertificateUntrusted)),
        NetworkAgentError(.transport, "other", underlying: CocoaError(.fileNoSuchFile)),
        NetworkAgentError(.redirectFailed, "loop"),
    ])
    func nonTransientErrorsAreThrownAtOnceAndUnchanged(_ thrown: NetworkAgentError) async throws {
        let clock = ManualClock(advancesOnSleep: true)
        let inner = AttemptCounter()
        let error = await #expect(throws: NetworkAgentError.self) {
            try await self.call(.retry(clock: clock), responses: [.failure(thrown), .status(200)], inner: inner)
        }
        #expect(error?.code == thrown.code)
        #expect(error?.message == thrown.message)
        #expect(inner.attempts == 1)
        #expect(clock.sleeps.isEmpty)
    }

    @Test func anErrorThatIsNotANetworkAgentErrorPassesThroughUnchanged() async throws {
        struct Boom: Error {}
        struct Thrower: NetworkAgentPlugin {
            func intercept(
                _ request: URLRequest,
                endpoint: any NetworkAgentEndpoint,
                next: NetworkAgentExchange
            ) async throws -> (data: Data, response: URLResponse) {
                throw Boom()
            }
        }
        let provider = NetworkAgentProvider<RetryEndpoint>(
            plugins: [.retry(clock: ManualClock(advancesOnSleep: true)), Thrower()],
            agent: NetworkAgent(transport: StubTransport())
        )
        await #expect(throws: Boom.self) { try await provider.request(endpoint: .stubbed) }
    }

    @Test func aFailureThatIsNotRetryableAfterRetriesSaysHowManyAttemptsWereMade() async throws {
        let tls = NetworkAgentError(.transport, "tls", underlying: URLError(.secureConnectionFailed))
        let error = await #expect(throws: NetworkAgentError.self) {
            try await self.call(
                .retry(clock: ManualClock(advancesOnSleep: true)),
                responses: [.status(503), .failure(tls)]
            )
        }
        #expect(error?.urlErrorCode == .secureConnectionFailed)
        #expect(error?.message == "tls [retry: gave up after 2 attempts: the last failure is not retryable]")
    }

    // MARK: - Veto and methods

    @Test func thePredicateSeesTheFailedAttemptAndCanVetoTheRetry() async throws {
        let seen = Locked<[RetryPlugin.FailedAttempt]>([])
        let plugin = RetryPlugin.retry(clock: ManualClock(advancesOnSleep: true)) { failure in
            seen.withLock { $0.append(failure) }
            return failure.number < 2
        }
        let result = try await call(plugin, responses: [.status(503)])
        #expect(result.attempts == 2)
        #expect(result.events.map(\.name) == ["retry_scheduled", "retry_vetoed"])
        #expect(result.events.last?.attributes == ["attempt": "2", "reason": "status_503", "veto": "predicate"])
        let failures = seen.withLock { $0 }
        #expect(failures.map(\.number) == [1, 2])
        #expect(failures.map(\.reason) == [.status(503), .status(503)])
        #expect(failures.allSatisfy { $0.response?.statusCode == 503 && $0.error == nil })
        #expect(failures.first?.request.httpMethod == "GET")
    }

    @Test(arguments: [HTTPMethod.get, .head, .options, .put, .delete])
    func idempotentMethodsAreRetried(_ method: HTTPMethod) async throws {
        var endpoint = RetryEndpoint.stubbed
        endpoint.method = method
        let result = try await call(
            .retry(clock: ManualClock(advancesOnSleep: true)),
            responses: [.status(503), .status(200)],
            endpoint: endpoint
        )
        #expect(result.attempts == 2)
    }

    @Test(arguments: [HTTPMethod.post, .patch])
    func nonIdempotentMethodsAreRetriedOnlyWithAnIdempotencyKey(_ method: HTTPMethod) async throws {
        var endpoint = RetryEndpoint.stubbed
        endpoint.method = method
        let plain = try await call(
            .retry(clock: ManualClock(advancesOnSleep: true)),
            responses: [.status(503), .status(200)],
            endpoint: endpoint
        )
        #expect(plain.attempts == 1)
        #expect(plain.response.status == 503)
        #expect(plain.events.last?.attributes == ["attempt": "1", "reason": "status_503", "veto": "not_idempotent"])

        endpoint.headers["Idempotency-Key"] = "\"k1\""
        let keyed = try await call(
            .retry(clock: ManualClock(advancesOnSleep: true)),
            responses: [.status(503), .status(200)],
            endpoint: endpoint
        )
        #expect(keyed.attempts == 2)
        #expect(keyed.response.status == 200)

        let never = try await call(
            .retry(.init(nonIdempotentMethods: .neverRetry), clock: ManualClock(advancesOnSleep: true)),
            responses: [.status(503), .status(200)],
            endpoint: endpoint
        )
        #expect(never.attempts == 1)
    }

    @Test func aPostWithoutAKeyThatFailsOnTheNetworkSaysWhyItWasNotRetried() async throws {
        var endpoint = RetryEndpoint.stubbed
        endpoint.method = .post
        let error = await #expect(throws: NetworkAgentError.self) {
            try await self.call(
                .retry(clock: ManualClock(advancesOnSleep: true)),
                responses: [.connectionRefused],
                endpoint: endpoint
            )
        }
        #expect(
            error?.message.hasSuffix(
                "[retry: not retried after 1 attempt: POST is not idempotent and has no Idempotency-Key]"
            ) == true
        )
    }

    @Test func theIdempotentMethodsAreConfigurableAndCaseInsensitive() async throws {
        var endpoint = RetryEndpoint.stubbed
        endpoint.method = .post
        let result = try await call(
            .retry(.init(idempotentMethods: ["post"]), clock: ManualClock(advancesOnSleep: true)),
            responses: [.status(503), .status(200)],
            endpoint: endpoint
        )
        #expect(result.attempts == 2)
    }
}
