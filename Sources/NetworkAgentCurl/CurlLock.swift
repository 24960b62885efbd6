#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A value guarded by a `pthread_mutex_t` (which Thread Sanitizer understands), with `Mutex`'s `withLock` shape.
///
/// The core's `Locked` is `package`, not public, and `Synchronization.Mutex` needs macOS 15: this is the module's
/// own, used for the engine's command queue.
final class CurlLock<Value>: @unchecked Sendable {
    // @unchecked Sendable: `value` is only read or written inside `withLock`, between pthread_mutex_lock and
    // pthread_mutex_unlock on `mutex`, which lives in its own heap allocation from init to deinit.
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private var value: Value

    init(_ value: Value) {
        self.value = value
        mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deinitialize(count: 1)
        mutex.deallocate()
    }

    /// Runs `body` with exclusive access to the value; `body` must not lock this lock again.
    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }
}
