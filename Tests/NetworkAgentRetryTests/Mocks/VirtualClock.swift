import Foundation
import NetworkAgent
import NetworkAgentRetry

/// A clock whose sleeps return at once and move time forward, recording each delay.
final class VirtualClock: RetryClock {
    /// The wall-clock date at virtual time zero: `Sun, 06 Nov 1994 08:49:37 GMT`.
    static let epoch = Date(timeIntervalSince1970: 784_111_777)

    private struct State {
        var now: Duration = .zero
        var sleeps: [Duration] = []
    }

    private let state = Locked(State())
    private let onSleep: @Sendable (_ count: Int) -> Void

    /// - Parameter onSleep: Called after each sleep with the number of sleeps so far.
    init(onSleep: @escaping @Sendable (_ count: Int) -> Void = { _ in }) {
        self.onSleep = onSleep
    }

    var now: Duration { state.withLock { $0.now } }

    var date: Date {
        let (seconds, attoseconds) = now.components
        return Self.epoch.addingTimeInterval(Double(seconds) + Double(attoseconds) * 1e-18)
    }

    /// Every delay slept so far, in order.
    var sleeps: [Duration] { state.withLock { $0.sleeps } }

    func advance(by duration: Duration) {
        state.withLock { $0.now += duration }
    }

    func sleep(for duration: Duration) async throws {
        try Task.checkCancellation()
        let count = state.withLock { state in
            state.now += duration
            state.sleeps.append(duration)
            return state.sleeps.count
        }
        onSleep(count)
    }
}
