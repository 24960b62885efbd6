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
/// A struct around one heap object that holds both the value and the mutex (a `ManagedBuffer` whose header is the
/// value and whose one element is the `pthread_mutex_t`): one allocation per lock made, not an object and a separate
/// block for the mutex. Copies of a `Locked` share that object, so they are the same lock, as references to the
/// class it was before were; `===` tells whether two are.
///
/// Every pthread call's result is checked with `precondition`, as swift-metrics' `Locks.swift` does: a mutex that
/// cannot be made, locked or unlocked is a broken process, not an error a caller could handle.
///
/// <!-- snippet: skip -->
/// ```swift
/// let hits = Locked(0)
/// hits.withLock { $0 += 1 }
/// ```
package struct Locked<Value>: @unchecked Sendable {
    // @unchecked Sendable: the value is only read or written inside `withLock`, between pthread_mutex_lock and
    // pthread_mutex_unlock on the mutex beside it; the mutex is initialised in init and destroyed when the storage
    // object goes, and never moves (it lives in the tail of that heap object, which does not move).
    // `@usableFromInline` so that `withLock` can be inlined: called across modules (every plugin's lock), an
    // unspecialised generic `withLock` was a measurable part of a closed circuit breaker's CPU per call.
    @usableFromInline let storage: LockedStorage<Value>

    /// Creates a lock around an initial value.
    ///
    /// - Parameter value: The initial value.
    package init(_ value: Value) {
        storage = LockedStorage.make(value)
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
        // The storage object outlives the call (this value holds it), so the pointer to its tail stays valid.
        let mutex = storage.mutex
        let locked = pthread_mutex_lock(mutex)
        precondition(locked == 0, "pthread_mutex_lock failed with error \(locked)")
        defer {
            let unlocked = pthread_mutex_unlock(mutex)
            precondition(unlocked == 0, "pthread_mutex_unlock failed with error \(unlocked)")
        }
        return try body(&storage.header)
    }

    /// Whether two locks are the same lock (copies of one `Locked`), as `===` told for the class this was.
    ///
    /// - Parameters:
    ///   - lhs: A lock.
    ///   - rhs: Another lock.
    /// - Returns: `true` when both share one storage object.
    package static func === (lhs: Locked, rhs: Locked) -> Bool {
        lhs.storage === rhs.storage
    }
}

/// The one heap object of a ``Locked``: the value in the header, the mutex as the single tail element.
@usableFromInline
package final class LockedStorage<Value>: ManagedBuffer<Value, pthread_mutex_t> {
    /// A storage object holding `value` and an initialised mutex.
    static func make(_ value: Value) -> LockedStorage {
        let buffer = create(minimumCapacity: 1) { _ in value }
        // `create` returns the dynamic type it was called on, this class; the cast does not allocate.
        let storage = unsafeDowncast(buffer, to: LockedStorage.self)
        storage.withUnsafeMutablePointerToElements { mutex in
            mutex.initialize(to: pthread_mutex_t())
            let result = pthread_mutex_init(mutex, nil)
            precondition(result == 0, "pthread_mutex_init failed with error \(result)")
        }
        return storage
    }

    /// The mutex, in this object's tail: it stays where it is while the object lives.
    @inlinable var mutex: UnsafeMutablePointer<pthread_mutex_t> {
        withUnsafeMutablePointerToElements { $0 }
    }

    deinit {
        // The header (the value) is destroyed by ManagedBuffer; the element is this class's to destroy.
        withUnsafeMutablePointerToElements { mutex in
            let result = pthread_mutex_destroy(mutex)
            precondition(result == 0, "pthread_mutex_destroy failed with error \(result)")
            mutex.deinitialize(count: 1)
        }
    }
}
