public import Foundation
import NetworkAgent

/// A clock that moves only when a test says so, for plugins that take a `Clock` (retry, metrics) and a wall-clock
/// date (retry's `Retry-After`, the disk cache's freshness, token expiry).
///
/// Time starts at zero and moves with ``advance(by:)``; a sleep ends once the clock reaches its deadline, or at once
/// with `CancellationError` when the sleeping task is cancelled. Made with `advancesOnSleep: true`, every sleep
/// instead moves the clock to its own deadline and returns at once, so a backoff schedule runs in no time. Each
/// sleep's length is recorded in ``sleeps``. ``date`` is the wall clock that moves with it, from `startDate`.
/// Thread-safe.
///
/// ```swift
/// let clock = ManualClock(advancesOnSleep: true)
/// let plugin = RetryPlugin(clock: clock, now: { clock.date })
/// // … make a call that is retried twice …
/// print(clock.sleeps)  // the two backoff delays, exactly
/// ```
public final class ManualClock: Clock, Sendable {
    /// A point in the time of a ``ManualClock``: the time since the clock started.
    public struct Instant: InstantProtocol, Sendable, CustomStringConvertible {
        /// The time since the clock started.
        public var offset: Duration

        /// Creates an instant.
        ///
        /// - Parameter offset: The time since the clock started.
        public init(offset: Duration) {
            self.offset = offset
        }

        /// The instant `duration` later.
        ///
        /// - Parameter duration: The time to add; negative moves earlier.
        /// - Returns: The later instant.
        public func advanced(by duration: Duration) -> Instant {
            Instant(offset: offset + duration)
        }

        /// The time from this instant to `other`.
        ///
        /// - Parameter other: The other instant.
        /// - Returns: `other` minus this instant; negative when `other` is earlier.
        public func duration(to other: Instant) -> Duration {
            other.offset - offset
        }

        /// Whether `lhs` is earlier than `rhs`.
        ///
        /// - Parameters:
        ///   - lhs: An instant.
        ///   - rhs: Another instant.
        /// - Returns: `true` when `lhs` comes first.
        public static func < (lhs: Instant, rhs: Instant) -> Bool {
            lhs.offset < rhs.offset
        }

        /// The offset, e.g. `2.5 seconds`.
        public var description: String { "\(offset)" }
    }

    private struct Sleeper {
        let deadline: Instant
        let continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var now = Instant(offset: .zero)
        var sleeps: [Duration] = []
        var sleepers: [Int: Sleeper] = [:]
        /// Sleeps between their start and the registration of their continuation, and whether each was cancelled
        /// in that gap.
        var starting: [Int: Bool] = [:]
        var nextID = 0

        /// Removes the sleepers whose deadline has come.
        mutating func takeDue() -> [Sleeper] {
            let due = sleepers.filter { $0.value.deadline <= now }
            for id in due.keys { sleepers[id] = nil }
            return Array(due.values)
        }
    }

    /// The wall-clock date at instant zero.
    public let startDate: Date
    /// Whether a sleep moves the clock to its deadline and returns at once.
    public let advancesOnSleep: Bool
    private let state = Locked(State())

    /// Creates a clock at instant zero.
    ///
    /// - Parameters:
    ///   - startDate: The wall-clock ``date`` at instant zero; defaults to `Sun, 06 Nov 1994 08:49:37 GMT`, a fixed
    ///     date so that HTTP dates in tests are exact.
    ///   - advancesOnSleep: Whether a sleep moves the clock to its deadline and returns at once instead of waiting
    ///     for ``advance(by:)``; defaults to `false`.
    public init(startDate: Date = Date(timeIntervalSince1970: 784_111_777), advancesOnSleep: Bool = false) {
        self.startDate = startDate
        self.advancesOnSleep = advancesOnSleep
    }

    /// The current instant.
    public var now: Instant { state.withLock { $0.now } }

    /// Zero: the clock has no resolution limit.
    public var minimumResolution: Duration { .zero }

    /// The wall-clock date now: ``startDate`` plus the time since instant zero.
    public var date: Date { startDate.addingTimeInterval(now.offset.timeInterval) }

    /// The length of every sleep so far (from the instant it started to its deadline, zero for a deadline already
    /// passed), in the order they started.
    public var sleeps: [Duration] { state.withLock { $0.sleeps } }

    /// The number of sleeps waiting for the clock to reach their deadline.
    public var sleeperCount: Int { state.withLock { $0.sleepers.count + $0.starting.count } }

    /// Moves the clock forward and ends every sleep whose deadline it reaches.
    ///
    /// - Parameter duration: How far to move; a negative duration is ignored (the clock never goes back).
    public func advance(by duration: Duration) {
        let due = state.withLock { state in
            state.now = state.now.advanced(by: max(.zero, duration))
            return state.takeDue()
        }
        for sleeper in due { sleeper.continuation.resume() }
    }

    /// Suspends the calling task until the clock reaches `deadline` (at once with `advancesOnSleep`).
    ///
    /// - Parameters:
    ///   - deadline: The instant to wake at.
    ///   - tolerance: Ignored.
    /// - Throws: `CancellationError` when the calling task is cancelled before the deadline is reached.
    public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        try Task.checkCancellation()
        if advancesOnSleep {
            let due = state.withLock { state in
                state.sleeps.append(max(.zero, state.now.duration(to: deadline)))
                state.now = max(state.now, deadline)
                return state.takeDue()
            }
            for sleeper in due { sleeper.continuation.resume() }
            return
        }
        let id = state.withLock { state in
            state.sleeps.append(max(.zero, state.now.duration(to: deadline)))
            let id = state.nextID
            state.nextID += 1
            state.starting[id] = false
            return id
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let result: Result<Void, any Error>? = state.withLock { state in
                    let cancelled = state.starting.removeValue(forKey: id) ?? false
                    if cancelled { return .failure(CancellationError()) }
                    if deadline <= state.now { return .success(()) }
                    state.sleepers[id] = Sleeper(deadline: deadline, continuation: continuation)
                    return nil
                }
                if let result { continuation.resume(with: result) }
            }
        } onCancel: {
            let sleeper = state.withLock { state -> Sleeper? in
                if state.starting[id] != nil { state.starting[id] = true }
                return state.sleepers.removeValue(forKey: id)
            }
            sleeper?.continuation.resume(throwing: CancellationError())
        }
    }
}
