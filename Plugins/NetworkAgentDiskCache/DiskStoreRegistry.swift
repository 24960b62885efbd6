import Foundation
import NetworkAgent

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The ``DiskStore``s that plugins opened by directory in this process: one per directory, shared by every plugin
/// on it, so that two providers of one app can share a cache. Other processes are still kept out by the
/// directory's `flock`.
///
/// Directories are keyed by their standardized path with symbolic links resolved. A store is held weakly; its lock
/// file is reference-counted by the stores using it, and closed (releasing the `flock`) when the last one goes. The
/// count, not the weak reference, decides when: a store whose last plugin is going may still be deinitialising when
/// the next plugin opens the directory, and the new store then takes over the open lock instead of finding it held.
///
/// Opening a store (rebuilding its index) can take long: about a second for 100,000 entries. It happens outside the
/// registry's lock, so that plugins on other directories are never held up by it; a plugin on the same directory
/// waits for that open and gets its store, so that no directory is ever opened twice at once.
enum DiskStoreRegistry {
    private struct Slot {
        weak var store: DiskStore?
        let descriptor: Int32
        var users: Int
    }

    private enum Entry {
        /// A store is being opened, outside the lock; `done` is left when it is open (or failed). `previous` is the
        /// slot of a store going away whose lock the new one takes over.
        case opening(done: DispatchGroup, previous: Slot?)
        case open(Slot)
    }

    private static let entries = Locked<[String: Entry]>([:])

    /// Called with each directory as its store starts opening, outside the registry's lock. For tests, which hold
    /// an open up to see what else waits for it.
    static let willOpen = Locked<(@Sendable (String) -> Void)?>(nil)

    /// The store of a directory: the one open in this process, or a new one.
    ///
    /// A store already open keeps the bound and durability it was opened with.
    ///
    /// - Parameters:
    ///   - directory: The store's directory.
    ///   - maximumBytes: The bound of a new store.
    ///   - durability: The durability of a new store.
    /// - Returns: The directory's store.
    /// - Throws: ``DiskCachePlugin/Error`` with ``DiskCachePlugin/Error/Code/directoryLocked`` when another process, or a
    ///   ``DiskStore`` created directly in this one, holds the directory.
    static func store(
        directory: URL,
        maximumBytes: Int,
        durability: DiskStore.Durability
    ) throws(DiskCachePlugin.Error) -> DiskStore {
        let key = directory.standardizedFileURL.resolvingSymlinksInPath().path
        enum Step {
            case found(DiskStore)
            case wait(DispatchGroup)
            case open(DispatchGroup, takingOver: Int32?)
        }
        while true {
            let step = entries.withLock { entries -> Step in
                switch entries[key] {
                case .opening(let done, _):
                    return .wait(done)
                case .open(let slot):
                    if let store = slot.store { return .found(store) }
                    // The last store is being deinitialised and has not released the lock yet: take it over.
                    let done = DispatchGroup()
                    done.enter()
                    entries[key] = .opening(done: done, previous: slot)
                    return .open(done, takingOver: slot.descriptor)
                case nil:
                    let done = DispatchGroup()
                    done.enter()
                    entries[key] = .opening(done: done, previous: nil)
                    return .open(done, takingOver: nil)
                }
            }
            switch step {
            case .found(let store):
                return store
            case .wait(let done):
                done.wait()
            case .open(let done, let descriptor):
                defer { done.leave() }
                return try open(directory, key: key, maximumBytes: maximumBytes, durability: durability, descriptor)
            }
        }
    }

    /// Opens the store of a directory marked as opening, outside the lock, and records it.
    private static func open(
        _ directory: URL,
        key: String,
        maximumBytes: Int,
        durability: DiskStore.Durability,
        _ takenOver: Int32?
    ) throws(DiskCachePlugin.Error) -> DiskStore {
        willOpen.withLock { $0 }?(key)
        let descriptor: Int32
        if let takenOver {
            descriptor = takenOver
        } else {
            let lock: DiskStore.Lock
            do {
                lock = try DiskStore.lock(directory)
            } catch {
                entries.withLock { $0[key] = nil }
                throw error
            }
            guard case .held(let held, _) = lock else {
                // Unusable directory: a store of its own, so that a later plugin tries again.
                entries.withLock { $0[key] = nil }
                return DiskStore(directory: directory, maximumBytes: maximumBytes, durability: durability, lock: lock)
            }
            descriptor = held
        }
        let store = DiskStore(
            directory: directory,
            maximumBytes: maximumBytes,
            durability: durability,
            lock: .held(descriptor: descriptor, sharedAs: key)
        )
        entries.withLock { entries in
            // Users of a lock taken over may have gone meanwhile (``release(_:sharedAs:)`` counts them down).
            var users = 1
            if case .opening(_, let previous?) = entries[key] { users += previous.users }
            entries[key] = .open(Slot(store: store, descriptor: descriptor, users: users))
        }
        return store
    }

    /// Called by a shared store as it goes: closes the lock file when no other store uses it.
    ///
    /// - Parameters:
    ///   - descriptor: The store's lock file descriptor.
    ///   - key: The key the store was registered under.
    static func release(_ descriptor: Int32, sharedAs key: String) {
        entries.withLock { entries in
            switch entries[key] {
            case .open(var slot) where slot.descriptor == descriptor:
                slot.users -= 1
                if slot.users > 0 {
                    entries[key] = .open(slot)
                } else {
                    entries[key] = nil
                    close(descriptor)
                }
            case .opening(let done, var previous?) where previous.descriptor == descriptor:
                // A new store is taking this lock over: it stays open whatever the count.
                previous.users -= 1
                entries[key] = .opening(done: done, previous: previous)
            default:
                break
            }
        }
    }
}
