import Dispatch
import NetworkAgent

/// Hands a transfer's progress to the caller's handler off the engine thread, in order and coalesced: the engine
/// thread only records the value; a queue of the transfer's own calls the handler with the first value and then the
/// newest it has (a slow handler sees fewer, later values, and delays nobody else). What ends the call (its answer,
/// the end of its body stream) runs on that queue after the last report, so a caller has the final report when it is
/// answered.
final class CurlProgressRelay: Sendable {
    private struct Pending {
        /// The transfer's first report, never coalesced: a handler always hears that a transfer began.
        var first: TransferProgress?
        var reportedAny = false
        var progress: TransferProgress?
        var last: (@Sendable () -> Void)?
        /// A drain is scheduled or running.
        var scheduled = false
    }

    private let handler: TransferProgress.Handler
    private let queue = DispatchQueue(label: "NetworkAgentCurl.progress")
    private let pending = Locked(Pending())

    init(handler: @escaping TransferProgress.Handler) {
        self.handler = handler
    }

    /// Records `progress` (engine thread); the handler gets it, or a newer value, soon.
    func report(_ progress: TransferProgress) {
        let schedule = pending.withLock { pending in
            if pending.reportedAny {
                pending.progress = progress
            } else {
                pending.reportedAny = true
                pending.first = progress
            }
            return Self.claimDrain(&pending)
        }
        if schedule { queue.async { self.drain() } }
    }

    /// Runs `last` after the reports recorded so far have been handed on.
    func finish(then last: @escaping @Sendable () -> Void) {
        let schedule = pending.withLock { pending in
            pending.last = last
            return Self.claimDrain(&pending)
        }
        if schedule { queue.async { self.drain() } }
    }

    private static func claimDrain(_ pending: inout Pending) -> Bool {
        guard !pending.scheduled else { return false }
        pending.scheduled = true
        return true
    }

    private enum Work {
        case report(TransferProgress)
        case last(@Sendable () -> Void)
    }

    private func drain() {
        while true {
            let work = pending.withLock { pending -> Work? in
                if let first = pending.first {
                    pending.first = nil
                    return .report(first)
                }
                if let progress = pending.progress {
                    pending.progress = nil
                    return .report(progress)
                }
                if let last = pending.last {
                    pending.last = nil
                    return .last(last)
                }
                pending.scheduled = false
                return nil
            }
            switch work {
            case .report(let progress): handler(progress)
            case .last(let last): last()
            case nil: return
            }
        }
    }
}
