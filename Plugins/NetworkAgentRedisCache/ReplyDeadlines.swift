import Dispatch
import NetworkAgent

/// The command timeouts of one connection's waiting callers, kept by one timer.
///
/// Every command waits at most the same ``RedisStore/Configuration/commandTimeout``, so deadlines come in the order
/// the commands were sent: a first-in, first-out list and one timer armed for the oldest caller still waiting do.
/// A command answered in time only leaves the list of waiters (a dictionary removal); the timer skips it when it
/// fires. Under steady traffic the timer fires about once per timeout, where a timer per command (as before) cost
/// every hit a timer's setup and, a timeout later, a wake-up of a worker thread to find the caller long answered.
final class ReplyDeadlines: @unchecked Sendable {
    // @unchecked Sendable: the mutable state is in a `Locked`; the timer source is a constant, and libdispatch lets
    // any thread set its schedule.
    private struct State {
        /// What to do when each waiting caller's deadline passes, by waiter number.
        var waiting: [UInt64: @Sendable () -> Void] = [:]
        /// Waiter numbers with their deadlines, oldest first; answered ones are skipped when the timer fires.
        var order: [(id: UInt64, deadline: DispatchTime)] = []
        /// The first element of ``order`` not yet looked at.
        var head = 0
        var nextID: UInt64 = 0
        /// Whether the timer is set for a deadline.
        var isArmed = false
    }

    private let timeout: DispatchTimeInterval
    private let state = Locked(State())
    private let timer: any DispatchSourceTimer

    /// - Parameter timeout: How long each caller may wait.
    init(timeout: Duration) {
        self.timeout = .nanoseconds(Int(clamping: max(.zero, timeout).nanoseconds))
        let timer = DispatchSource.makeTimerSource(queue: DispatchQueue.global())
        self.timer = timer
        timer.schedule(deadline: .distantFuture)
        timer.setEventHandler { [weak self] in self?.expire() }
        timer.activate()
    }

    deinit {
        timer.cancel()
    }

    /// Registers a caller that waits from now: `onTimeout` runs (on a global queue) when it is still waiting a
    /// timeout from now.
    ///
    /// - Returns: The caller's number, for ``answered(_:)``.
    func add(onTimeout: @escaping @Sendable () -> Void) -> UInt64 {
        let deadline = DispatchTime.now() + timeout
        let (id, arm) = state.withLock { state -> (UInt64, Bool) in
            let id = state.nextID
            state.nextID += 1
            state.waiting[id] = onTimeout
            state.order.append((id, deadline))
            defer { state.isArmed = true }
            return (id, !state.isArmed)
        }
        if arm { timer.schedule(deadline: deadline) }
        return id
    }

    /// Forgets a caller that got its reply (or its failure) before its deadline.
    func answered(_ id: UInt64) {
        state.withLock { _ = $0.waiting.removeValue(forKey: id) }
    }

    /// Runs the timeouts of the callers whose deadlines have passed, and sets the timer for the next one.
    private func expire() {
        let now = DispatchTime.now()
        let (expired, next) = state.withLock { state -> ([@Sendable () -> Void], DispatchTime?) in
            var expired: [@Sendable () -> Void] = []
            while state.head < state.order.count {
                let (id, deadline) = state.order[state.head]
                if state.waiting[id] == nil {
                    state.head += 1
                    continue
                }
                guard deadline <= now, let action = state.waiting.removeValue(forKey: id) else { break }
                expired.append(action)
                state.head += 1
            }
            if state.head >= 1_024 || state.head == state.order.count {
                state.order.removeFirst(state.head)
                state.head = 0
            }
            let next = state.head < state.order.count ? state.order[state.head].deadline : nil
            state.isArmed = next != nil
            return (expired, next)
        }
        if let next { timer.schedule(deadline: next) }
        for action in expired { action() }
    }
}
