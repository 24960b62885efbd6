public import Foundation
public import NetworkAgent

#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif

/// Fails calls fast while their origin is failing, so that a fleet of clients stops sending it load it cannot take,
/// and lets a few probes through after an open interval to find out when it has healed.
///
/// Register it with `.circuitBreaker()` (see
/// ``NetworkAgent/NetworkAgentPlugin/circuitBreaker(_:clock:random:now:)``), innermost but for the disk cache's
/// position (see Docs/Resilience.md): every attempt a retry plugin makes then passes through it, and a cache outside
/// it may answer a fail-fast with a stale copy (`stale-if-error`).
///
/// Each key (by default the request's origin, `scheme://host:port`, see ``Key``) has its own circuit:
/// - **closed**: calls go through; their outcomes fill a sliding window (``Window``, the last 100 calls by default).
///   Once it holds ``Configuration/minimumCalls``, a failure rate at or above ``Configuration/failureRateThreshold``
///   (50 %) or a slow-call rate at or above ``Configuration/slowCallRateThreshold`` opens the circuit.
/// - **open**: calls fail at once, unsent, with a ``/NetworkAgent/NetworkAgentError`` of code
///   ``/NetworkAgent/NetworkAgentError/Code/circuitOpen`` whose `underlying` ``Error`` says until when.
///   After ``Configuration/openInterval`` (60 s, plus up to ``Configuration/openIntervalJitter``) the circuit becomes
/// - **half-open**: ``Configuration/probeCalls`` calls go through (the others fail fast); once they all have an
///   outcome, the circuit closes if their rates are under the thresholds and opens again otherwise.
///
/// What counts as a failure is ``Configuration/classify`` (by default: 5xx, 429, 408, timeouts and transport
/// failures; cancellations are not counted; other responses are successes). A streamed call counts by how its body
/// ends: read to its end, a success; broken off, as its error; given up by the caller, not at all.
///
/// Every change of state is emitted as a ``/NetworkAgent/NetworkAgentEvent`` of kind
/// ``/NetworkAgent/NetworkAgentEvent/Kind/circuitStateChanged(key:from:to:)`` (logged as
/// `circuit_breaker.state_changed`, a gauge and a counter in the metrics plugin), every fail-fast as
/// `circuit_breaker.rejected` with the key.
///
/// Thread-safe: copies of one plugin value share their circuits; every state change happens under one lock.
public struct CircuitBreakerPlugin: NetworkAgentPlugin {
    /// The configuration.
    public let configuration: Configuration
    private let circuits: Circuits
    private let elapsed: @Sendable () -> Duration
    private let now: @Sendable () -> Date
    private let random: @Sendable () -> Double

    /// Creates a circuit breaker whose circuits all start closed.
    ///
    /// - Parameters:
    ///   - configuration: Thresholds, window, open interval, probes, key and classification; defaults to
    ///     ``Configuration/default``.
    ///   - clock: Measures the window, call durations and the open interval; defaults to `ContinuousClock`. Tests
    ///     pass a `ManualClock` from NetworkAgentTesting.
    ///   - random: Returns a value in `0...1` for the jitter of the open interval; defaults to the system's
    ///     generator.
    ///   - now: The wall clock, for ``Error/openUntil``; defaults to `Date()`.
    public init(
        configuration: Configuration = .default,
        clock: any Clock<Duration> = ContinuousClock(),
        random: @escaping @Sendable () -> Double = { Double.random(in: 0...1) },
        now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.configuration = configuration
        self.circuits = Circuits(settings: CircuitStateMachine.Settings(configuration))
        // The default clock read directly: through `any Clock` each reading costs a generic call.
        if clock is ContinuousClock {
            let origin = ContinuousClock.now
            self.elapsed = { origin.duration(to: ContinuousClock.now) }
        } else {
            self.elapsed = clock.stopwatch()
        }
        self.now = now
        self.random = random
    }

    /// The state of the circuit of `key`; `closed` for a key no call has used yet.
    ///
    /// - Parameter key: The key, as ``Configuration/key`` makes it (e.g. `http://127.0.0.1:8080`).
    /// - Returns: The state now. An open circuit whose interval has ended reads `open` until the next call moves it
    ///   to half-open.
    public func state(forKey key: String) -> NetworkAgentEvent.CircuitState {
        circuits.state(forKey: key)
    }

    /// The key of a request under this plugin's configuration.
    ///
    /// - Parameters:
    ///   - request: The request.
    ///   - endpoint: Its endpoint.
    /// - Returns: The key of its circuit.
    public func key(for request: URLRequest, endpoint: any NetworkAgentEndpoint) -> String {
        configuration.key.make(request, endpoint)
    }

    /// Sends the request when its circuit lets it through, and counts the outcome.
    ///
    /// - Parameters:
    ///   - request: The request.
    ///   - endpoint: The endpoint the call was made with.
    ///   - next: The rest of the exchange, called at most once.
    /// - Returns: What `next` returns.
    /// - Throws: ``/NetworkAgent/NetworkAgentError`` with code ``/NetworkAgent/NetworkAgentError/Code/circuitOpen`` when
    ///   the circuit is open (nothing sent), its `underlying` error an ``Error`` that says until when (see
    ///   `NetworkAgentError.circuitBreakerError`); otherwise what `next` throws, unchanged.
    public func intercept(
        _ request: URLRequest,
        endpoint: any NetworkAgentEndpoint,
        next: NetworkAgentExchange
    ) async throws -> (data: Data, response: URLResponse) {
        let start = elapsed()
        let circuit = acquire(request, endpoint: endpoint, at: start)
        if let transition = circuit.transition { emit(transition, circuit) }
        guard case .permitted(let ticket) = circuit.permission else {
            let key = circuits.key(at: circuit.index)
            guard case .rejected(let until) = circuit.permission else {
                throw rejection(key: key, until: nil, at: start)
            }
            throw rejection(key: key, until: until, at: start)
        }
        let result: (data: Data, response: URLResponse)
        do {
            result = try await next(request)
        } catch {
            let classification = Task.isCancelled ? .ignored : configuration.classify(.error(error))
            let end = elapsed()
            record(classification, circuit, ticket, slow: end - start >= configuration.slowCallDuration, at: end)
            throw error
        }
        let end = elapsed()
        let slow = end - start >= configuration.slowCallDuration
        guard let http = result.response as? HTTPURLResponse else {
            record(.success, circuit, ticket, slow: slow, at: end)
            return result
        }
        let classification = configuration.classify(.response(http))
        if next.isStreaming, classification == .success, (200..<300).contains(http.statusCode) {
            // The body is still to come: the call's outcome is how it ends (a body that breaks off counts as what
            // its error is; one the caller gives up is not counted). Slow means slow to its head.
            next.onStreamEnd { [self] streamEnd in
                let outcome: Classification =
                    switch streamEnd.outcome {
                    case .completed: .success
                    case .failed(let error): configuration.classify(.error(error))
                    case .cancelled: .ignored
                    }
                record(outcome, circuit, ticket, slow: slow)
            }
        } else {
            record(classification, circuit, ticket, slow: slow, at: end)
        }
        return result
    }

    /// The circuit of a call and whether it may go through: by the URL's `scheme://authority` text for the
    /// default key (the key string is built only the first time a text is seen), by the key function otherwise.
    private func acquire(_ request: URLRequest, endpoint: any NetworkAgentEndpoint, at now: Duration) -> Acquired {
        guard configuration.key.isOrigin, let url = request.url, let authority = AuthorityText(url) else {
            return circuits.acquire(key: configuration.key.make(request, endpoint), authority: nil, at: now)
        }
        if let acquired = circuits.acquire(authority: authority, at: now) { return acquired }
        return circuits.acquire(key: Self.origin(of: url), authority: authority, at: now)
    }

    private func record(
        _ classification: Classification,
        _ circuit: Acquired,
        _ ticket: CircuitStateMachine.Ticket,
        slow: Bool,
        at end: Duration? = nil
    ) {
        let outcome: CircuitStateMachine.Outcome =
            switch classification {
            case .success: .success
            case .failure: .failure
            case .ignored: .ignored
            }
        let transition = circuits.record(
            outcome,
            slow: slow,
            index: circuit.index,
            ticket: ticket,
            at: end ?? elapsed(),
            random: random
        )
        if let transition { emit(transition, circuit) }
    }

    private func rejection(key: String, until: Duration?, at time: Duration) -> NetworkAgentError {
        let error = breakerError(key: key, until: until, at: time)
        return NetworkAgentError(.circuitOpen, error.message, underlying: error)
    }

    private func breakerError(key: String, until: Duration?, at time: Duration) -> Error {
        if NetworkAgentEvents.hasObservers {
            NetworkAgentEvents.emit(
                NetworkAgentEvent(.other(source: "circuit_breaker", name: "rejected"), attributes: ["key": key])
            )
        }
        guard let until else {
            return Error(.open, "the circuit of \(key) is half-open and its probes are in flight", key: key)
        }
        let remaining = max(.zero, until - time)
        let date = now().addingTimeInterval(remaining.timeInterval)
        return Error(
            .open,
            "the circuit of \(key) is open for another \(remaining.roundedMilliseconds) ms",
            key: key,
            retryAfter: remaining,
            openUntil: date
        )
    }

    private func emit(_ transition: CircuitStateMachine.Transition, _ circuit: Acquired) {
        guard NetworkAgentEvents.hasObservers else { return }
        let key = circuits.key(at: circuit.index)
        var attributes = ["key": key, "from": transition.from.rawValue, "to": transition.to.rawValue]
        if let until = transition.openUntil {
            attributes["open_ms"] = "\(max(.zero, until - elapsed()).roundedMilliseconds)"
        }
        NetworkAgentEvents.emit(
            NetworkAgentEvent(
                .circuitStateChanged(key: key, from: transition.from, to: transition.to),
                attributes: attributes
            )
        )
    }
}

extension CircuitBreakerPlugin {
    /// A call's circuit, as ``Circuits`` found it, and its answer.
    struct Acquired: Sendable {
        /// Where the circuit is in the table (stable: circuits are never removed); its key is
        /// `Circuits.key(at:)`, read only for an event or an error.
        let index: Int
        let permission: CircuitStateMachine.Permission
        let transition: CircuitStateMachine.Transition?
    }

    /// The circuits of one plugin value and its copies, under one lock. Each key's state machine has a stable
    /// index; a call finds it with one hash lookup (by key, or by ``AuthorityText`` for the default key), and
    /// records its outcome by index.
    final class Circuits: Sendable {
        private struct Table {
            var machines: [CircuitStateMachine] = []
            var keys: [String] = []
            var byKey: [String: Int] = [:]
            /// For the default key: each `scheme://authority` text seen, to its circuit.
            var byAuthority: [AuthorityText: Int] = [:]
        }

        private let settings: CircuitStateMachine.Settings
        private let table = Locked(Table())

        init(settings: CircuitStateMachine.Settings) {
            self.settings = settings
        }

        func state(forKey key: String) -> NetworkAgentEvent.CircuitState {
            table.withLock { table in table.byKey[key].map { table.machines[$0].state } ?? .closed }
        }

        /// The key of the circuit at `index`.
        func key(at index: Int) -> String {
            table.withLock { $0.keys[index] }
        }

        /// Asks the circuit of a `scheme://authority` text seen before; `nil` for a new text.
        func acquire(authority: AuthorityText, at now: Duration) -> Acquired? {
            table.withLock { table in
                guard let index = table.byAuthority[authority] else { return nil }
                let (permission, transition) = table.machines[index].acquire(at: now)
                return Acquired(index: index, permission: permission, transition: transition)
            }
        }

        /// Asks the circuit of `key`, made closed if new; remembers `authority` as naming it.
        func acquire(key: String, authority: AuthorityText?, at now: Duration) -> Acquired {
            table.withLock { table in
                let index: Int
                if let known = table.byKey[key] {
                    index = known
                } else {
                    index = table.machines.count
                    table.machines.append(CircuitStateMachine(settings: settings))
                    table.keys.append(key)
                    table.byKey[key] = index
                }
                if let authority { table.byAuthority[authority] = index }
                let (permission, transition) = table.machines[index].acquire(at: now)
                return Acquired(index: index, permission: permission, transition: transition)
            }
        }

        func record(
            _ outcome: CircuitStateMachine.Outcome,
            slow: Bool,
            index: Int,
            ticket: CircuitStateMachine.Ticket,
            at now: Duration,
            random: () -> Double
        ) -> CircuitStateMachine.Transition? {
            table.withLock { table in
                table.machines[index].record(outcome, slow: slow, ticket: ticket, at: now, jitterUnit: random)
            }
        }
    }
}

extension NetworkAgentError {
    /// The circuit breaker's detail of a ``/NetworkAgent/NetworkAgentError/Code/circuitOpen`` error: the key, and
    /// until when the circuit stays open; `nil` for any other error.
    ///
    /// ```swift
    /// import NetworkAgentCircuitBreaker
    ///
    /// do {
    ///     _ = try await provider.request(endpoint: .posts)
    /// } catch let error as NetworkAgentError where error.code == .circuitOpen {
    ///     print("back at", error.circuitBreakerError?.openUntil ?? .distantFuture)
    /// }
    /// ```
    public var circuitBreakerError: CircuitBreakerPlugin.Error? {
        underlying as? CircuitBreakerPlugin.Error
    }
}

extension NetworkAgentPlugin where Self == CircuitBreakerPlugin {
    /// A circuit breaker that fails calls fast while their origin is failing; see ``CircuitBreakerPlugin``.
    ///
    /// ```swift
    /// import NetworkAgentCircuitBreaker
    ///
    /// let provider = NetworkAgentProvider<Api>(plugins: [.retry(), .circuitBreaker(), .validate()])
    /// ```
    ///
    /// - Parameters:
    ///   - configuration: Thresholds, window, open interval, probes, key and classification; defaults to
    ///     ``CircuitBreakerPlugin/Configuration/default``.
    ///   - clock: The clock of the window and the open interval; defaults to `ContinuousClock`.
    ///   - random: A source of values in `0...1` for the open interval's jitter; defaults to the system's generator.
    ///   - now: The wall clock for ``CircuitBreakerPlugin/Error/openUntil``; defaults to `Date()`.
    /// - Returns: A ``CircuitBreakerPlugin``.
    public static func circuitBreaker(
        _ configuration: CircuitBreakerPlugin.Configuration = .default,
        clock: any Clock<Duration> = ContinuousClock(),
        random: @escaping @Sendable () -> Double = { Double.random(in: 0...1) },
        now: @escaping @Sendable () -> Date = { Date() }
    ) -> CircuitBreakerPlugin {
        CircuitBreakerPlugin(configuration: configuration, clock: clock, random: random, now: now)
    }
}
