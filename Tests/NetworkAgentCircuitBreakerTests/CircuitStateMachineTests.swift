import NetworkAgent
import Testing

@testable import NetworkAgentCircuitBreaker

/// The pure state machine, event by event in every state, with time passed in as durations.
@Suite struct CircuitStateMachineTests {
    typealias Machine = CircuitStateMachine

    static func machine(
        failureRate: Double = 0.5,
        slowRate: Double = 1.0,
        minimumCalls: Int = 4,
        window: CircuitBreakerPlugin.Window = .count(4),
        openInterval: Duration = .seconds(10),
        jitter: Double = 0,
        probes: Int = 2
    ) -> Machine {
        Machine(
            settings: .init(
                CircuitBreakerPlugin.Configuration(
                    failureRateThreshold: failureRate,
                    slowCallRateThreshold: slowRate,
                    window: window,
                    minimumCalls: minimumCalls,
                    openInterval: openInterval,
                    openIntervalJitter: jitter,
                    probeCalls: probes
                )
            )
        )
    }

    /// Acquires at `now` and records `outcome` at once; returns the transitions.
    @discardableResult
    static func call(
        _ machine: inout Machine,
        _ outcome: Machine.Outcome,
        at now: Duration = .zero,
        slow: Bool = false
    ) -> [Machine.Transition] {
        let (permission, first) = machine.acquire(at: now)
        guard case .permitted(let ticket) = permission else { return [first].compactMap { $0 } }
        let second = machine.record(outcome, slow: slow, ticket: ticket, at: now, jitterUnit: { 0 })
        return [first, second].compactMap { $0 }
    }

    @Test func staysClosedBelowTheMinimumNumberOfCalls() {
        var machine = Self.machine()
        for _ in 0..<3 { Self.call(&machine, .failure) }
        #expect(machine.state == .closed)
        let transitions = Self.call(&machine, .failure)
        #expect(transitions == [.init(from: .closed, to: .open, openUntil: .seconds(10))])
        #expect(machine.state == .open)
    }

    @Test func opensAtTheThresholdNotBelow() {
        var machine = Self.machine(window: .count(4))
        Self.call(&machine, .success)
        Self.call(&machine, .success)
        Self.call(&machine, .success)
        Self.call(&machine, .failure)
        #expect(machine.state == .closed)  // 1 in 4 = 25 %
        Self.call(&machine, .failure)  // the first success slides out: 2 in 4 = 50 %
        #expect(machine.state == .open)
    }

    @Test func ignoredOutcomesAreNotCounted() {
        var machine = Self.machine()
        for _ in 0..<10 { Self.call(&machine, .ignored) }
        Self.call(&machine, .failure)
        #expect(machine.state == .closed)
    }

    @Test func slowCallsOpenTheCircuit() {
        var machine = Self.machine(slowRate: 0.75)
        Self.call(&machine, .success, slow: true)
        Self.call(&machine, .success, slow: true)
        Self.call(&machine, .success)
        #expect(machine.state == .closed)
        Self.call(&machine, .success, slow: true)
        #expect(machine.state == .open)
    }

    @Test func openRejectsUntilTheIntervalEndsThenProbes() {
        var machine = Self.machine(probes: 2)
        for _ in 0..<4 { Self.call(&machine, .failure) }
        #expect(machine.acquire(at: .seconds(9)).0 == .rejected(until: .seconds(10)))
        let (first, transition) = machine.acquire(at: .seconds(10))
        #expect(transition == .init(from: .open, to: .halfOpen, openUntil: nil))
        guard case .permitted = first else {
            Issue.record("the first call after the interval is a probe")
            return
        }
        let (second, _) = machine.acquire(at: .seconds(10))
        guard case .permitted = second else {
            Issue.record("two probes are allowed")
            return
        }
        #expect(machine.acquire(at: .seconds(10)).0 == .rejected(until: nil))
    }

    @Test func successfulProbesCloseWithAFreshWindow() {
        var machine = Self.machine(probes: 2)
        for _ in 0..<4 { Self.call(&machine, .failure) }
        let (p1, _) = machine.acquire(at: .seconds(10))
        let (p2, _) = machine.acquire(at: .seconds(10))
        guard case .permitted(let t1) = p1, case .permitted(let t2) = p2 else {
            Issue.record("probes refused")
            return
        }
        #expect(machine.record(.success, slow: false, ticket: t1, at: .seconds(11), jitterUnit: { 0 }) == nil)
        #expect(machine.state == .halfOpen)
        let closed = machine.record(.success, slow: false, ticket: t2, at: .seconds(11), jitterUnit: { 0 })
        #expect(closed == .init(from: .halfOpen, to: .closed, openUntil: nil))
        // A fresh window: three failures are under the minimum of four again.
        for _ in 0..<3 { Self.call(&machine, .failure, at: .seconds(12)) }
        #expect(machine.state == .closed)
    }

    @Test func failedProbesReopenForAnotherInterval() {
        var machine = Self.machine(openInterval: .seconds(10), probes: 2)
        for _ in 0..<4 { Self.call(&machine, .failure) }
        Self.call(&machine, .failure, at: .seconds(10))
        let transitions = Self.call(&machine, .success, at: .seconds(10))
        #expect(transitions == [.init(from: .halfOpen, to: .open, openUntil: .seconds(20))])
        #expect(machine.acquire(at: .seconds(19)).0 == .rejected(until: .seconds(20)))
    }

    @Test func aCancelledProbeGivesItsPermitBack() {
        var machine = Self.machine(probes: 1)
        for _ in 0..<4 { Self.call(&machine, .failure) }
        let (probe, _) = machine.acquire(at: .seconds(10))
        guard case .permitted(let ticket) = probe else {
            Issue.record("probe refused")
            return
        }
        #expect(machine.acquire(at: .seconds(10)).0 == .rejected(until: nil))
        _ = machine.record(.ignored, slow: false, ticket: ticket, at: .seconds(10), jitterUnit: { 0 })
        let transitions = Self.call(&machine, .success, at: .seconds(10))
        #expect(transitions == [.init(from: .halfOpen, to: .closed, openUntil: nil)])
    }

    @Test func outcomesOfAnEarlierStateAreDropped() {
        var machine = Self.machine(probes: 1)
        let (early, _) = machine.acquire(at: .zero)
        guard case .permitted(let stale) = early else {
            Issue.record("closed refused")
            return
        }
        for _ in 0..<4 { Self.call(&machine, .failure) }
        _ = machine.acquire(at: .seconds(10))  // half-open, its one probe in flight
        // The call that started while closed ends now: it is no probe.
        #expect(machine.record(.success, slow: false, ticket: stale, at: .seconds(10), jitterUnit: { 0 }) == nil)
        #expect(machine.state == .halfOpen)
    }

    @Test(arguments: [0.0, 0.5, 1.0])
    func jitterLengthensTheOpenInterval(unit: Double) {
        var machine = Self.machine(openInterval: .seconds(10), jitter: 0.2)
        for _ in 0..<3 { Self.call(&machine, .failure) }
        let (permission, _) = machine.acquire(at: .seconds(1))
        guard case .permitted(let ticket) = permission else {
            Issue.record("closed refused")
            return
        }
        let transition = machine.record(.failure, slow: false, ticket: ticket, at: .seconds(1), jitterUnit: { unit })
        #expect(transition?.openUntil == .seconds(1) + .seconds(10) * (1 + 0.2 * unit))
    }

    @Test func aTimeWindowForgetsOldCalls() {
        var machine = Self.machine(minimumCalls: 2, window: .time(.seconds(10)))
        Self.call(&machine, .failure, at: .seconds(0))
        // Were the failure of 20 s ago still counted, 1 failure in 2 calls would open the circuit.
        Self.call(&machine, .success, at: .seconds(20))
        #expect(machine.state == .closed)
        Self.call(&machine, .failure, at: .seconds(21))
        #expect(machine.state == .open)  // 1 in 2 within the last 10 s
    }

    @Test func aTimeWindowCountsOnlyItsOwnSpan() {
        var window = SlidingWindow(.time(.seconds(10)))
        window.record(failure: true, slow: false, at: .seconds(1))
        window.record(failure: false, slow: false, at: .seconds(5))
        #expect(window.totals == .init(calls: 2, failures: 1, slow: 0))
        window.expire(at: .seconds(11.5))
        #expect(window.totals == .init(calls: 1, failures: 0, slow: 0))
        window.expire(at: .seconds(100))
        #expect(window.totals == .init(calls: 0, failures: 0, slow: 0))
    }

    @Test func aCountWindowKeepsTheLastCalls() {
        var window = SlidingWindow(.count(3))
        for failure in [true, true, false, false, false] {
            window.record(failure: failure, slow: false, at: .zero)
        }
        #expect(window.totals == .init(calls: 3, failures: 0, slow: 0))
    }

    @Test func forcingMovesToAnyState() {
        var machine = Self.machine()
        #expect(machine.force(.open, at: .seconds(1), jitterUnit: { 0 })?.openUntil == .seconds(11))
        #expect(machine.force(.open, at: .seconds(2), jitterUnit: { 0 }) == nil)
        #expect(machine.force(.closed, at: .seconds(2), jitterUnit: { 0 })?.to == .closed)
    }
}
