import NetworkAgent

/// What must be undone when the bench ends, normally or on SIGINT/SIGTERM: servers to stop, files to delete.
enum Cleanup {
    private static let actions = Locked<[@Sendable () -> Void]>([])

    /// Registers an action; actions must be safe to run more than once.
    static func add(_ action: @escaping @Sendable () -> Void) {
        actions.withLock { $0.append(action) }
    }

    /// Runs and forgets every registered action, the last registered first.
    static func runAll() {
        let pending = actions.withLock { actions in
            defer { actions.removeAll() }
            return actions
        }
        for action in pending.reversed() {
            action()
        }
    }
}
