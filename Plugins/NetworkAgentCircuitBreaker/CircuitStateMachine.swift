import NetworkAgent

/// The life of one circuit: closed, open, half-open, as a value with one `mutating` method per event that returns
/// what happened. No clock, no lock, no I/O: the plugin passes the time in and performs the result.
///
/// - closed: every call is permitted; outcomes go into a ``SlidingWindow``. Once it holds at least
///   `minimumCalls`, a failure rate or a slow-call rate at or above its threshold opens the circuit.
/// - open: every call is rejected until `openUntil` (the open interval plus jitter); the first call after it moves
///   the circuit to half-open and is its first probe.
/// - half-open: at most `probeCalls` calls are permitted; once that many have an outcome, the circuit closes (a
///   fresh window) when their rates are below the thresholds, and opens again otherwise. An ignored outcome (a
///   cancelled probe) gives its permit back.
///
/// Every transition starts a new generation; an outcome of a call permitted in an earlier generation is dropped,
/// so a slow call from before the circuit opened cannot count as a probe.
struct CircuitStateMachine: Sendable {
    typealias State = NetworkAgentEvent.CircuitState

    /// The settings the machine needs from the configuration, validated.
    struct Settings: Sendable, Equatable {
        var failureRateThreshold: Double
        var slowCallRateThreshold: Double
        var minimumCalls: Int
        var window: CircuitBreakerPlugin.Window
        var openInterval: Duration
        var openIntervalJitter: Double
        var probeCalls: Int

        init(_ configuration: CircuitBreakerPlugin.Configuration) {
            failureRateThreshold = Self.fraction(configuration.failureRateThreshold)
            slowCallRateThreshold = Self.fraction(configuration.slowCallRateThreshold)
            minimumCalls = max(1, configuration.minimumCalls)
            window = configuration.window
            openInterval = max(.zero, configuration.openInterval)
            openIntervalJitter = Self.fraction(configuration.openIntervalJitter)
            probeCalls = max(1, configuration.probeCalls)
        }

        private static func fraction(_ value: Double) -> Double {
            value.isNaN ? 1 : min(1, max(0, value))
        }
    }

    /// Proof that a call was permitted, handed back with its outcome.
    struct Ticket: Sendable, Equatable {
        let generation: UInt64
    }

    /// The answer to a call that wants to go through.
    enum Permission: Sendable, Equatable {
        /// The call may go through; hand the ticket back with its outcome.
        case permitted(Ticket)
        /// The call must fail fast. `until` is when the circuit leaves the open state, `nil` while half-open probes
        /// are in flight.
        case rejected(until: Duration?)
    }

    /// A change of state.
    struct Transition: Sendable, Equatable {
        let from: State
        let to: State
        /// When the circuit may let a probe through, for a transition to open.
        let openUntil: Duration?
    }

    /// A call's outcome as the machine counts it.
    enum Outcome: Sendable, Equatable {
        case success
        case failure
        /// Neither: not counted (a cancelled call).
        case ignored
    }

    private enum Phase: Sendable {
        case closed
        case open(until: Duration)
        case halfOpen(permitted: Int, recorded: SlidingWindow.Totals)
    }

    let settings: Settings
    private var phase = Phase.closed
    /// The closed circuit's window, kept out of `phase` so that a call's outcome updates it in place; emptied on
    /// every move to closed.
    private var window: SlidingWindow
    private var generation: UInt64 = 0

    /// A closed circuit with an empty window.
    init(settings: Settings) {
        self.settings = settings
        window = SlidingWindow(settings.window)
    }

    /// The current state.
    var state: State {
        switch phase {
        case .closed: .closed
        case .open: .open
        case .halfOpen: .halfOpen
        }
    }

    /// When an open circuit lets its first probe through; `nil` unless open.
    var openUntil: Duration? {
        if case .open(let until) = phase { return until }
        return nil
    }

    /// Asks to let a call through at `now`.
    ///
    /// - Returns: The permission, and the transition to half-open when the open interval has ended.
    mutating func acquire(at now: Duration) -> (Permission, Transition?) {
        switch phase {
        case .closed:
            return (.permitted(Ticket(generation: generation)), nil)
        case .open(let until):
            guard now >= until else { return (.rejected(until: until), nil) }
            let transition = move(to: .halfOpen(permitted: 1, recorded: SlidingWindow.Totals()), openUntil: nil)
            return (.permitted(Ticket(generation: generation)), transition)
        case .halfOpen(let permitted, let recorded):
            guard permitted < settings.probeCalls else { return (.rejected(until: nil), nil) }
            phase = .halfOpen(permitted: permitted + 1, recorded: recorded)
            return (.permitted(Ticket(generation: generation)), nil)
        }
    }

    /// Records the outcome of a permitted call.
    ///
    /// - Parameters:
    ///   - outcome: Success, failure or ignored.
    ///   - slow: Whether the call took at least the slow-call duration.
    ///   - ticket: The ticket ``acquire(at:)`` gave the call.
    ///   - now: The time of the outcome.
    ///   - jitterUnit: Returns a value in `0...1` that sets the jitter of the open interval; called only when the
    ///     circuit opens.
    /// - Returns: The transition the outcome caused, if any.
    mutating func record(
        _ outcome: Outcome,
        slow: Bool,
        ticket: Ticket,
        at now: Duration,
        jitterUnit: () -> Double
    ) -> Transition? {
        guard ticket.generation == generation else { return nil }
        switch phase {
        case .closed:
            guard outcome != .ignored else { return nil }
            window.record(failure: outcome == .failure, slow: slow, at: now)
            guard window.totals.calls >= settings.minimumCalls, tripped(window.totals) else { return nil }
            return open(at: now, jitterUnit: jitterUnit)
        case .open:
            return nil
        case .halfOpen(let permitted, var recorded):
            guard outcome != .ignored else {
                phase = .halfOpen(permitted: max(0, permitted - 1), recorded: recorded)
                return nil
            }
            recorded.add(failure: outcome == .failure, slow: slow)
            guard recorded.calls >= settings.probeCalls else {
                phase = .halfOpen(permitted: permitted, recorded: recorded)
                return nil
            }
            if tripped(recorded) { return open(at: now, jitterUnit: jitterUnit) }
            return move(to: .closed, openUntil: nil)
        }
    }

    /// Forces the circuit to a state: closed with an empty window, open for one open interval from `now`, or
    /// half-open with no probe yet.
    mutating func force(_ state: State, at now: Duration, jitterUnit: () -> Double) -> Transition? {
        guard state != self.state else { return nil }
        switch state {
        case .closed: return move(to: .closed, openUntil: nil)
        case .open: return open(at: now, jitterUnit: jitterUnit)
        case .halfOpen: return move(to: .halfOpen(permitted: 0, recorded: SlidingWindow.Totals()), openUntil: nil)
        }
    }

    /// The open interval with jitter: `openInterval × (1 + jitter × unit)`.
    func openInterval(jitterUnit: Double) -> Duration {
        let unit = jitterUnit.isNaN ? 0 : min(1, max(0, jitterUnit))
        return settings.openInterval * (1 + settings.openIntervalJitter * unit)
    }

    private func tripped(_ totals: SlidingWindow.Totals) -> Bool {
        guard totals.calls > 0 else { return false }
        let calls = Double(totals.calls)
        return Double(totals.failures) / calls >= settings.failureRateThreshold
            || Double(totals.slow) / calls >= settings.slowCallRateThreshold
    }

    private mutating func open(at now: Duration, jitterUnit: () -> Double) -> Transition? {
        let until = now + openInterval(jitterUnit: jitterUnit())
        return move(to: .open(until: until), openUntil: until)
    }

    private mutating func move(to next: Phase, openUntil: Duration?) -> Transition? {
        let from = state
        phase = next
        if case .closed = next { window = SlidingWindow(settings.window) }
        generation &+= 1
        return Transition(from: from, to: state, openUntil: openUntil)
    }
}
