import NetworkAgent

/// Whether a ``RedisStore``'s Redis is known to be down, shared by the store's connections: a circuit breaker.
///
/// Closed, commands go to Redis. The first failure of any connection (an I/O error, a command past
/// ``RedisStore/Configuration/commandTimeout``, a refused reply) opens it: from then on every command fails at once
/// with that failure, without touching the network, and the connections' threads probe Redis in the background
/// (a reconnection, or a `PING` on a live connection), waiting ``RedisStore/Configuration/reconnectDelay`` after
/// the end of each failed probe, doubling up to ``RedisStore/Configuration/maximumReconnectDelay``. The first
/// probe that succeeds closes it.
final class RedisCircuit: Sendable {
    private struct State {
        var failure: RedisStore.Error?
        var listeners: [@Sendable () -> Void] = []
    }

    private let state = Locked(State())

    /// Why the store is known to be down, or `nil` when commands may go to Redis.
    var failure: RedisStore.Error? { state.withLock { $0.failure } }

    /// Calls `listener` (on the opening thread) each time the circuit opens, so that idle connections start probing.
    func onOpen(_ listener: @escaping @Sendable () -> Void) {
        state.withLock { $0.listeners.append(listener) }
    }

    /// Marks Redis as down; later commands fail at once with `failure` until ``close()``.
    func open(_ failure: RedisStore.Error) {
        let listeners = state.withLock { state -> [@Sendable () -> Void] in
            guard state.failure == nil else { return [] }
            state.failure = RedisStore.Error(
                failure.code,
                "Redis is known to be down, retrying in the background (\(failure.message))"
            )
            return state.listeners
        }
        for listener in listeners { listener() }
    }

    /// Marks Redis as answering again.
    func close() {
        state.withLock { $0.failure = nil }
    }
}
