import Foundation
public import NetworkAgent

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Repeats failed attempts of a call with exponential backoff and jitter, within a time budget, for idempotent
/// requests only.
///
/// Register it with `.retry()` (see ``NetworkAgent/NetworkAgentPlugin/retry(_:clock:shouldRetry:random:idempotencyKey:now:)``).
/// It works in ``intercept(_:endpoint:next:)``: each attempt calls `next(request)` again, so the plugins
/// registered after it run once per attempt and those before it once per call.
///
/// What is retried (see ``Policy``):
/// - responses with a status in ``Policy/retryableStatusCodes`` (408, 429, 500, 502, 503, 504);
/// - ``/NetworkAgent/NetworkAgentError/Code/transport`` failures whose `URLError` code is in ``Policy/retryableURLErrorCodes``
///   (refused, lost, reset, DNS, no network, timed out; never TLS), and attempts that missed their deadline
///   (``/NetworkAgent/NetworkAgentError/Code/timedOut``);
/// - only for methods in ``Policy/idempotentMethods``, or, for `POST`, `PATCH` and other methods, when the request
///   carries an `Idempotency-Key` (see ``NonIdempotentMethods``);
/// - unless the `shouldRetry` predicate vetoes it.
///
/// Never retried: cancellation, other 4xx statuses, TLS failures, errors thrown by other plugins.
///
/// How it stops:
/// - on a status: the last response is returned, as the server sent it (so `.validate()` or the caller decides);
///   that includes a 429 or 503 whose `Retry-After` asks for more than ``Policy/maximumDelay`` or the time left
///   in ``Policy/timeBudget``: the plugin does not wait, it hands back the server's answer at once;
/// - on an error: the last ``/NetworkAgent/NetworkAgentError`` is thrown with its code, underlying error, response and data
///   unchanged and its message extended with the number of attempts and why it stopped, e.g.
///   `… [retry: gave up after 3 attempts: maximum attempts reached]`;
/// - on cancellation of the calling task, during an attempt or the backoff sleep: at once, with
///   ``/NetworkAgent/NetworkAgentError/Code/cancelled``, sending nothing more.
///
/// Each decision is emitted as a ``/NetworkAgent/NetworkAgentEvent`` with source `retry`: `retry_scheduled` (kind
/// ``/NetworkAgent/NetworkAgentEvent/Kind/retryScheduled(delay:)``; `attempt`,
/// `reason`, `delay_ms`, `delay_source`), `retry_exhausted` (`attempts`, `reason`, `stop`, and `retry_after_ms`
/// when the server asked for too long) and `retry_vetoed`
/// (`attempt`, `reason`, `veto`).
///
/// One plugin value serves any number of concurrent calls. The only state it keeps between calls is its retry
/// budget (``Policy/budget``, gRPC's token bucket), shared by the value and its copies: once too many attempts fail,
/// a retry is refused and the call ends with its last answer or error (`retry_throttled`).
public struct RetryPlugin: NetworkAgentPlugin {
    /// The policy.
    public let policy: Policy
    private let clock: any Clock<Duration>
    /// The time `clock` has measured since the plugin was made.
    private let elapsed: @Sendable () -> Duration
    private let now: @Sendable () -> Date
    private let random: @Sendable () -> Double
    private let makeIdempotencyKey: @Sendable () -> String
    private let shouldRetry: (@Sendable (FailedAttempt) -> Bool)?
    /// ``Policy/idempotentMethods``, uppercased.
    private let idempotentMethods: Set<String>
    /// The shared retry budget, `nil` when ``Policy/budget`` is.
    private let bucket: TokenBucket?

    /// A fresh idempotency key: a random UUID as a Structured Field string (RFC 8941 §3.3.3), quoted as the
    /// `Idempotency-Key` draft specifies, e.g. `"8e03978e-40d5-43e8-bc93-6894a57f9324"`.
    ///
    /// - Returns: The key, quotes included.
    @usableFromInline static func randomIdempotencyKey() -> String {
        "\"" + UUID().uuidString.lowercased() + "\""
    }

    /// A random value in `0...1` from the system's random number generator.
    ///
    /// - Returns: The value.
    @usableFromInline static func systemRandomUnit() -> Double {
        Double.random(in: 0...1)
    }

    /// Creates a retry plugin.
    ///
    /// - Parameters:
    ///   - policy: When and how often to retry; defaults to ``Policy/default``.
    ///   - clock: Measures the time budget and sleeps between attempts; defaults to `ContinuousClock`. Tests pass
    ///     a `ManualClock` from NetworkAgentTesting.
    ///   - shouldRetry: Called for each failed attempt the policy would retry, before the delay is chosen; return
    ///     `false` to stop and hand back that attempt's outcome. `nil` (the default) vetoes nothing.
    ///   - random: Returns a value in `0...1` for the jitter (values outside are clamped); defaults to the
    ///     system's random number generator. Tests pass a fixed or seeded source.
    ///   - idempotencyKey: Makes the key added under ``NonIdempotentMethods/addIdempotencyKey``; defaults to a
    ///     random UUID as a quoted Structured Field string (RFC 8941 §3.3.3), e.g.
    ///     `"8e03978e-40d5-43e8-bc93-6894a57f9324"`.
    ///   - now: The wall clock, to turn a `Retry-After` HTTP-date into a delay; defaults to `Date()`.
    public init(
        policy: Policy = .default,
        clock: any Clock<Duration> = ContinuousClock(),
        shouldRetry: (@Sendable (FailedAttempt) -> Bool)? = nil,
        random: @escaping @Sendable () -> Double = RetryPlugin.systemRandomUnit,
        idempotencyKey: @escaping @Sendable () -> String = RetryPlugin.randomIdempotencyKey,
        now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.policy = policy
        self.clock = clock
        self.elapsed = clock.stopwatch()
        self.now = now
        self.random = random
        self.makeIdempotencyKey = idempotencyKey
        self.shouldRetry = shouldRetry
        self.idempotentMethods = Set(policy.idempotentMethods.map { $0.uppercased() })
        self.bucket = policy.budget.map(TokenBucket.init)
    }

    /// The tokens in the retry budget now, `nil` without one: ``RetryBudget/maximumTokens`` when nothing has
    /// failed, retries refused at half of it or less.
    public var budgetTokens: Double? { bucket?.content }

    /// Sends the request, and again after a delay for as long as the policy allows and the attempts fail in a
    /// retryable way.
    ///
    /// - Parameters:
    ///   - request: The request; under ``NonIdempotentMethods/addIdempotencyKey`` a non-idempotent request
    ///     without an `Idempotency-Key` gets one, the same on every attempt.
    ///   - endpoint: The endpoint the call was made with.
    ///   - next: The rest of the exchange, called once per attempt.
    /// - Returns: The first response that is not retried, or the last one when the retries stop on a status.
    /// - Throws: The first error that is not retried, unchanged; the last retryable ``/NetworkAgent/NetworkAgentError`` when
    ///   the retries stop, its message extended with the attempts and the reason; ``/NetworkAgent/NetworkAgentError/Code/cancelled``
    ///   when the calling task is cancelled.
    public func intercept(
        _ request: URLRequest,
        endpoint: any NetworkAgentEndpoint,
        next: NetworkAgentExchange
    ) async throws -> (data: Data, response: URLResponse) {
        var request = request
        let method = (request.httpMethod ?? "GET").uppercased()
        let methodAllowsRetry = prepareIdempotency(of: &request, method: method)
        let start = elapsed()
        var backoff = Backoff(policy: policy)
        var attempt = 0
        while true {
            attempt += 1
            if attempt > 1, Task.isCancelled { throw Self.cancelled }
            let failure: FailedAttempt
            do {
                let (data, response) = try await next(request)
                guard let http = response as? HTTPURLResponse, policy.retryableStatusCodes.contains(http.statusCode)
                else {
                    bucket?.refundForSuccess()
                    return (data: data, response: response)
                }
                failure = FailedAttempt(
                    number: attempt,
                    request: request,
                    reason: .status(http.statusCode),
                    response: http,
                    data: data
                )
            } catch {
                guard let agentError = error as? NetworkAgentError, let reason = retryableReason(for: agentError) else {
                    if attempt > 1, let agentError = error as? NetworkAgentError, agentError.code != .cancelled {
                        throw Self.annotate(agentError, attempts: attempt, stop: .notRetryable)
                    }
                    throw error
                }
                failure = FailedAttempt(number: attempt, request: request, reason: reason, error: agentError)
            }

            let budgetAllowsRetry = bucket?.takeForFailure() ?? true
            switch decide(after: failure, method: method, methodAllowsRetry: methodAllowsRetry) {
            case .retry(let delay, let source):
                let delay = delay ?? backoff.delay(beforeRetry: attempt, unit: random())
                if let stop = checkBudget(delay: delay, source: source, start: start) {
                    return try stopped(after: failure, stop: stop)
                }
                guard budgetAllowsRetry else { return try stopped(after: failure, stop: .retryBudget) }
                emit(
                    .retryScheduled(delay: delay),
                    [
                        "attempt": "\(attempt)", "reason": failure.reason.description,
                        "delay_ms": "\(Self.milliseconds(delay))", "delay_source": source.rawValue,
                    ]
                )
                if delay > .zero {
                    do { try await clock.sleep(for: delay) } catch { throw Self.cancelled }
                }
            case .stop(let stop):
                return try stopped(after: failure, stop: stop)
            }
        }
    }

    // MARK: - Decisions

    /// What to do after a failed attempt.
    enum Decision: Equatable {
        /// Try again after this delay (`nil`: the next backoff delay).
        case retry(after: Duration?, source: DelaySource)
        /// Stop, handing back this attempt's outcome.
        case stop(StopReason)
    }

    /// Where a delay comes from, as the `delay_source` event attribute.
    enum DelaySource: String {
        case backoff
        case retryAfter = "retry_after"
    }

    /// Why the retries stopped, as the `stop` or `veto` event attribute.
    enum StopReason: Equatable, CustomStringConvertible {
        case notIdempotent(method: String)
        case vetoed
        case maximumAttempts
        case timeBudget
        case retryAfterTooLong(Duration)
        case notRetryable
        case retryBudget

        /// The stable name used in events.
        var name: String {
            switch self {
            case .notIdempotent: "not_idempotent"
            case .vetoed: "predicate"
            case .maximumAttempts: "maximum_attempts"
            case .timeBudget: "time_budget"
            case .retryAfterTooLong: "retry_after_too_long"
            case .notRetryable: "not_retryable"
            case .retryBudget: "retry_budget"
            }
        }

        /// The explanation used in error messages.
        var description: String {
            switch self {
            case .notIdempotent(let method):
                "\(method) is not idempotent and has no \(RetryPlugin.idempotencyKeyHeader)"
            case .vetoed: "vetoed by the shouldRetry predicate"
            case .maximumAttempts: "maximum attempts reached"
            case .timeBudget: "the next delay would exceed the time budget"
            case .retryAfterTooLong(let delay):
                "Retry-After asks for \(RetryPlugin.milliseconds(delay)) ms, more than the policy allows"
            case .notRetryable: "the last failure is not retryable"
            case .retryBudget: "the retry budget is spent"
            }
        }

        /// Whether this stop is a veto (of the method or the predicate) rather than retries running out.
        var isVeto: Bool {
            switch self {
            case .notIdempotent, .vetoed: true
            default: false
            }
        }
    }

    /// Decides on a failed attempt, except for the time budget of a backoff delay (which needs the delay drawn).
    func decide(
        after failure: FailedAttempt,
        method: String,
        methodAllowsRetry: Bool
    ) -> Decision {
        guard methodAllowsRetry else { return .stop(.notIdempotent(method: method)) }
        guard failure.number < max(1, policy.maximumAttempts) else { return .stop(.maximumAttempts) }
        if let shouldRetry, !shouldRetry(failure) { return .stop(.vetoed) }
        if let response = failure.response, policy.retryAfterStatusCodes.contains(response.statusCode),
            let header = response.value(forHTTPHeaderField: "Retry-After"),
            let delay = RetryAfter.delay(from: header, now: now())
        {
            guard delay <= max(.zero, policy.maximumDelay) else { return .stop(.retryAfterTooLong(delay)) }
            return .retry(after: delay, source: .retryAfter)
        }
        return .retry(after: nil, source: .backoff)
    }

    /// The reason to stop when a delay would end after the time budget.
    private func checkBudget(delay: Duration, source: DelaySource, start: Duration) -> StopReason? {
        guard let budget = policy.timeBudget else { return nil }
        guard elapsed() - start + delay > budget else { return nil }
        return source == .retryAfter ? .retryAfterTooLong(delay) : .timeBudget
    }

    /// Why an error may be retried under the policy, or `nil` when it may not.
    private func retryableReason(for error: NetworkAgentError) -> Reason? {
        if error.code == .timedOut { return policy.retriesTimeouts ? .timedOut : nil }
        guard error.code == .transport, let code = error.urlErrorCode, policy.retryableURLErrorCodes.contains(code)
        else { return nil }
        return .transport(code)
    }

    /// Whether the method allows retries, adding an idempotency key where the policy says so.
    private func prepareIdempotency(of request: inout URLRequest, method: String) -> Bool {
        guard !idempotentMethods.contains(method) else { return true }
        let hasKey = request.headerField(Self.idempotencyKeyHeader) != nil
        switch policy.nonIdempotentMethods {
        case .neverRetry:
            return false
        case .retryWithIdempotencyKey:
            return hasKey
        case .addIdempotencyKey:
            if !hasKey { request.setValue(makeIdempotencyKey(), forHTTPHeaderField: Self.idempotencyKeyHeader) }
            return true
        }
    }

    /// Hands back the outcome of the last attempt after emitting why the retries stopped.
    private func stopped(
        after failure: FailedAttempt,
        stop: StopReason
    ) throws -> (data: Data, response: URLResponse) {
        if stop == .retryBudget {
            emit(
                Self.otherEvent("retry_throttled"),
                [
                    "attempt": "\(failure.number)", "reason": failure.reason.description,
                    "tokens": bucket.map { String(format: "%.1f", $0.content) } ?? "",
                ]
            )
        } else if stop.isVeto {
            emit(
                Self.otherEvent("retry_vetoed"),
                ["attempt": "\(failure.number)", "reason": failure.reason.description, "veto": stop.name]
            )
        } else {
            var attributes = ["attempts": "\(failure.number)", "reason": failure.reason.description, "stop": stop.name]
            if case .retryAfterTooLong(let delay) = stop {
                attributes["retry_after_ms"] = "\(Self.milliseconds(delay))"
            }
            emit(Self.otherEvent("retry_exhausted"), attributes)
        }
        if let error = failure.error { throw Self.annotate(error, attempts: failure.number, stop: stop) }
        guard let response = failure.response else {
            throw NetworkAgentError(.invalidResponse, "the retry plugin lost the last response")
        }
        return (data: failure.data ?? Data(), response: response)
    }

    private func emit(_ kind: NetworkAgentEvent.Kind, _ attributes: [String: String]) {
        guard NetworkAgentEvents.hasObservers else { return }
        NetworkAgentEvents.emit(NetworkAgentEvent(kind, attributes: attributes))
    }

    /// An event no other plugin acts on: known by its name only, with source `retry`.
    private static func otherEvent(_ name: String) -> NetworkAgentEvent.Kind {
        .other(source: "retry", name: name)
    }

    // MARK: - Helpers

    private static var cancelled: NetworkAgentError {
        NetworkAgentError(.cancelled, "the request was cancelled")
    }

    /// The error with the same code, underlying error, response and data, and the attempts and stop reason in
    /// its message.
    static func annotate(_ error: NetworkAgentError, attempts: Int, stop: StopReason) -> NetworkAgentError {
        let count = attempts == 1 ? "1 attempt" : "\(attempts) attempts"
        let verb = stop.isVeto ? "not retried after" : "gave up after"
        return NetworkAgentError(
            error.code,
            "\(error.message) [retry: \(verb) \(count): \(stop)]",
            underlying: error.underlying,
            response: error.response,
            data: error.data
        )
    }

    static func milliseconds(_ duration: Duration) -> Int64 {
        duration.roundedMilliseconds
    }
}

extension NetworkAgentPlugin where Self == RetryPlugin {
    /// A plugin that retries failed attempts with exponential backoff and jitter; see ``RetryPlugin``.
    ///
    /// ```swift
    /// let provider = NetworkAgentProvider<Api>(plugins: [.retry(), .validate()])
    /// ```
    ///
    /// - Parameters:
    ///   - policy: When and how often to retry; defaults to ``RetryPlugin/Policy/default``.
    ///   - clock: The clock for the budget and the sleeps; defaults to `ContinuousClock`.
    ///   - shouldRetry: Vetoes a retry the policy would make by returning `false`; `nil` vetoes nothing.
    ///   - random: A source of values in `0...1` for the jitter; defaults to the system's generator.
    ///   - idempotencyKey: Makes keys for ``RetryPlugin/NonIdempotentMethods/addIdempotencyKey``; defaults to a
    ///     quoted random UUID.
    ///   - now: The wall clock for `Retry-After` dates; defaults to `Date()`.
    /// - Returns: A ``RetryPlugin``.
    public static func retry(
        _ policy: RetryPlugin.Policy = .default,
        clock: any Clock<Duration> = ContinuousClock(),
        shouldRetry: (@Sendable (RetryPlugin.FailedAttempt) -> Bool)? = nil,
        random: @escaping @Sendable () -> Double = RetryPlugin.systemRandomUnit,
        idempotencyKey: @escaping @Sendable () -> String = RetryPlugin.randomIdempotencyKey,
        now: @escaping @Sendable () -> Date = { Date() }
    ) -> RetryPlugin {
        RetryPlugin(
            policy: policy,
            clock: clock,
            shouldRetry: shouldRetry,
            random: random,
            idempotencyKey: idempotencyKey,
            now: now
        )
    }
}
