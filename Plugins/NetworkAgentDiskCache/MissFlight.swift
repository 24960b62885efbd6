import NetworkAgent

/// One response being fetched for every request in this process that missed the same primary key at the same time:
/// the requests that join it wait for its ``Outcome`` (collapsed forwarding, see
/// `DiskCacheExchange.fetchCollapsed(_:reason:)`).
///
/// A struct around its locked state, not a class holding it: one object less per flight. Copies are the same flight.
/// A flight is made only when a second request joins a fetch (`DiskCacheState.joinMiss(_:mayLead:)`); a miss that
/// nobody waits for makes none.
struct MissFlight: Sendable {
    /// How the request that fetched ended, as its waiters see it.
    enum Outcome: Sendable {
        /// It got a response (stored or not: a waiter looks in the store to know whether it answers it).
        case answered
        /// It failed (a connection drop, a timeout): each waiter fetches for itself.
        case failed
        /// It was cancelled by its caller: the waiters choose another one to fetch.
        case abandoned
        /// The waiter's bound passed first.
        case timedOut
        /// The waiter itself was cancelled.
        case cancelled
    }

    private struct State {
        var outcome: Outcome?
        var nextWaiter = 0
        var waiters: [Int: CheckedContinuation<Outcome, Never>] = [:]
        /// Waiters cancelled before they got to suspend.
        var cancelled: Set<Int> = []
    }

    private let state = Locked(State())

    /// Sets the outcome and wakes every waiter with it. Only the first call counts.
    func finish(_ outcome: Outcome) {
        let waiters = state.withLock { state -> [CheckedContinuation<Outcome, Never>] in
            guard state.outcome == nil else { return [] }
            state.outcome = outcome
            defer { state.waiters = [:] }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume(returning: outcome) }
    }

    /// The number of requests waiting for the outcome now.
    var waiterCount: Int { state.withLock { $0.waiters.count } }

    /// The outcome, waiting for it at most `limit`: ``Outcome/timedOut`` past it, ``Outcome/cancelled`` when the
    /// calling task is cancelled first.
    func outcome(waitingAtMost limit: Duration) async -> Outcome {
        await withTaskGroup(of: Outcome.self) { group in
            group.addTask { await self.outcome() }
            group.addTask {
                do {
                    try await Task.sleep(for: limit)
                    return .timedOut
                } catch {
                    return .cancelled
                }
            }
            let first = await group.next() ?? .cancelled
            group.cancelAll()
            return first
        }
    }

    /// The outcome, once there is one; ``Outcome/cancelled`` when the calling task is cancelled first.
    private func outcome() async -> Outcome {
        let id = state.withLock { state in
            state.nextWaiter += 1
            return state.nextWaiter
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let ready = state.withLock { state -> Outcome? in
                    if let outcome = state.outcome { return outcome }
                    if state.cancelled.remove(id) != nil { return .cancelled }
                    state.waiters[id] = continuation
                    return nil
                }
                if let ready { continuation.resume(returning: ready) }
            }
        } onCancel: {
            let waiter = state.withLock { state -> CheckedContinuation<Outcome, Never>? in
                if let waiter = state.waiters.removeValue(forKey: id) { return waiter }
                if state.outcome == nil { state.cancelled.insert(id) }
                return nil
            }
            waiter?.resume(returning: .cancelled)
        }
    }
}
