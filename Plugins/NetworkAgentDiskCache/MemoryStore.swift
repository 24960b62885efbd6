import NetworkAgent

/// A ``ResponseStore`` in memory: bounded in bytes with least-recently-used eviction, gone with the process.
///
/// For tests, and for apps that want HTTP caching semantics without a disk. Thread-safe.
public final class MemoryStore: ResponseStore {
    /// The default bound on the bytes held: 16 MiB.
    public static let defaultMaximumBytes = 16 << 20

    /// The most bytes the entries may take together (bodies, header text and a small fixed overhead each).
    public let maximumBytes: Int
    private let index = Locked(CacheIndex<CachedEntry>())

    /// Creates an empty store.
    ///
    /// - Parameter maximumBytes: See ``maximumBytes``. Defaults to ``defaultMaximumBytes``.
    public init(maximumBytes: Int = MemoryStore.defaultMaximumBytes) {
        self.maximumBytes = max(0, maximumBytes)
    }

    /// Every stored variant of one resource for one user, each marked as recently used.
    ///
    /// - Parameter primaryKey: A ``CacheKey/primary`` value.
    /// - Returns: The entries; empty when nothing is stored.
    public func variants(forPrimaryKey primaryKey: String) -> [CachedEntry] {
        index.withLock { index in
            index.ids(primary: primaryKey).compactMap { id in
                index.touch(id: id)
                return index.nodes[id]?.value
            }
        }
    }

    /// The keys of every stored variant of one resource for one user.
    ///
    /// - Parameter primaryKey: A ``CacheKey/primary`` value.
    /// - Returns: The keys; empty when nothing is stored.
    public func variantKeys(forPrimaryKey primaryKey: String) -> [CacheKey] {
        index.withLock { index in index.ids(primary: primaryKey).compactMap { index.nodes[$0]?.key } }
    }

    /// Stores an entry and evicts least recently used ones beyond ``maximumBytes``. An entry larger than
    /// ``maximumBytes`` is not stored; it removes any older entry under its key.
    ///
    /// - Parameters:
    ///   - entry: The entry.
    ///   - retention: Ignored: the store is bounded by size.
    /// - Returns: What was evicted.
    @discardableResult
    public func store(_ entry: CachedEntry, retention: EntryRetention) -> ResponseStoreUsage {
        let bytes = entry.approximateByteCount
        guard bytes <= maximumBytes else {
            remove(entry.key)
            return ResponseStoreUsage()
        }
        let id = entry.key.identifier
        return index.withLock { index in
            index.insert(id: id, key: entry.key, value: entry, bytes: bytes)
            var evicted = ResponseStoreUsage()
            while index.totalBytes > maximumBytes, let oldest = index.oldestID, oldest != id,
                let node = index.remove(id: oldest)
            {
                evicted.entryCount += 1
                evicted.totalBytes += node.bytes
            }
            return evicted
        }
    }

    /// Removes one entry, if it is stored.
    ///
    /// - Parameter key: The entry's key.
    public func remove(_ key: CacheKey) {
        let id = key.identifier
        index.withLock { _ = $0.remove(id: id) }
    }

    /// Removes every entry for a URL, whatever its method, user or variant.
    ///
    /// - Parameter url: A normalised URL, as in ``CacheKey/url``.
    /// - Returns: The number of entries removed.
    @discardableResult
    public func removeEntries(forURL url: String) -> Int {
        index.withLock { index in
            let ids = index.ids(url: url)
            for id in ids { index.remove(id: id) }
            return ids.count
        }
    }

    /// Removes every entry.
    public func removeAll() {
        index.withLock { $0 = CacheIndex() }
    }

    /// The number of entries and the bytes they take.
    public var usage: ResponseStoreUsage {
        index.withLock { ResponseStoreUsage(entryCount: $0.count, totalBytes: $0.totalBytes) }
    }
}
