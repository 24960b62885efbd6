#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A value guarded by a lock, with the same `withLock` shape as `Synchronization.Mutex`.
///
/// NetworkAgent and its plugins keep shared state in this rather than in `Mutex` because, on Linux with
/// Swift 6.3, `Mutex` waits on a futex that Thread Sanitizer cannot see, so every access inside `withLock`
/// is reported as a race (reproduced with four threads incrementing a `Mutex<[Int: Int]>`). This type locks a
/// `pthread_mutex_t`, which Thread Sanitizer understands, so a TSan run reports only real races.
///
/// `package`, not public: the core, its plugins, its transports, the test server, the example and the benchmarks
/// share it; it is not part of the library's API. It is the package's one lock: a module that needs a lock uses this
/// one rather than a copy (`LockTests` checks that no other type calls `pthread_mutex_init`).
///
/// Every pthread call's result is checked with `precondition`, as swift-metrics' `Locks.swift` does: a mutex that
/// cannot be made, locked or unlocked is a broken process, not an error a caller could handle.
///
/// <!-- snippet: skip -->
/// ```swift
/// let hits = Locked(0)
/// hits.withLock { $0 += 1 }
/// ```
package final class Locked<Value>: @unchecked Sendable {
    // @unchecked Sendable: `value` is only read or written inside `withLock`, between pthread_mutex_lock and
    // pthread_mutex_unlock on `mutex`; the mutex is initialised in init and destroyed in deinit, never moved
    // (it lives in its own heap allocation).
    // `@usableFromInline` so that `withLock` can be inlined: called across modules (every plugin's lock), an
    // unspecialised generic `withLock` was a measurable part of a closed circuit breaker's CPU per call.
    @usableFromInline let mutex: UnsafeMutablePointer<pthread_mutex_t>
    @usableFromInline var value: Value

    /// Creates a lock around an initial value.
    ///
    /// - Parameter value: The initial value.
    package init(_ value: Value) {
        self.value = value
        mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        let result = pthread_mutex_init(mutex, nil)
        precondition(result == 0, "pthread_mutex_init failed with error \(result)")
    }

    deinit {
        let result = pthread_mutex_destroy(mutex)
        precondition(result == 0, "pthread_mutex_destroy failed with error \(result)")
        mutex.deinitialize(count: 1)
        mutex.deallocate()
    }

    /// Runs `body` with exclusive access to the value.
    ///
    /// - Parameter body: Reads or changes the value; must not call `withLock` on the same lock.
    /// - Returns: What `body` returns.
    /// - Throws: What `body` throws.
    @inlinable
    package func withLock<Result, Failure: Error>(
        _ body: (inout sending Value) throws(Failure) -> sending Result
    ) throws(Failure) -> sending Result {
        let locked = pthread_mutex_lock(mutex)
        precondition(locked == 0, "pthread_mutex_lock failed with error \(locked)")
        defer {
            let unlocked = pthread_mutex_unlock(mutex)
            precondition(unlocked == 0, "pthread_mutex_unlock failed with error \(unlocked)")
        }
        return try body(&value)
    }
}
