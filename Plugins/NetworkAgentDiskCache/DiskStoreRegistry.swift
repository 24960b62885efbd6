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
enum DiskStoreRegistry {
    private struct Slot {
        weak var store: DiskStore?
        let descriptor: Int32
        var users: Int
    }

    private static let slots = Locked<[String: Slot]>([:])

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
        // Opening happens under the registry's lock, so that two plugins opening one directory at once cannot
        // both build a store on it.
        return try slots.withLock { slots throws(DiskCachePlugin.Error) -> DiskStore in
            if var slot = slots[key] {
                if let store = slot.store { return store }
                // The last store is being deinitialised and has not released the lock yet: take it over.
                let store = DiskStore(
                    directory: directory,
                    maximumBytes: maximumBytes,
                    durability: durability,
                    lock: .held(descriptor: slot.descriptor, sharedAs: key)
                )
                slot.store = store
                slot.users += 1
                slots[key] = slot
                return store
            }
            let lock = try DiskStore.lock(directory)
            guard case .held(let descriptor, _) = lock else {
                // Unusable directory: a store of its own, so that a later plugin tries again.
                return DiskStore(directory: directory, maximumBytes: maximumBytes, durability: durability, lock: lock)
            }
            let store = DiskStore(
                directory: directory,
                maximumBytes: maximumBytes,
                durability: durability,
                lock: .held(descriptor: descriptor, sharedAs: key)
            )
            slots[key] = Slot(store: store, descriptor: descriptor, users: 1)
            return store
        }
    }

    /// Called by a shared store as it goes: closes the lock file when no other store uses it.
    ///
    /// - Parameters:
    ///   - descriptor: The store's lock file descriptor.
    ///   - key: The key the store was registered under.
    static func release(_ descriptor: Int32, sharedAs key: String) {
        slots.withLock { slots in
            guard var slot = slots[key], slot.descriptor == descriptor else { return }
            slot.users -= 1
            if slot.users > 0 {
                slots[key] = slot
            } else {
                slots[key] = nil
                close(descriptor)
            }
        }
    }
}
