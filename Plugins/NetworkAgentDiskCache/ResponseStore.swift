/// Where a ``DiskCachePlugin`` keeps responses: ``DiskStore`` (the default) or ``MemoryStore``.
///
/// A store files entries under their ``CacheKey``; it knows nothing of HTTP semantics. Implementations must be
/// thread-safe (one store serves many concurrent requests), must never hand out an entry that was not stored
/// whole, and should bound their size, evicting least recently used entries.
///
/// The plugin calls these methods directly on the task of the request, so they must not wait long: a store in
/// another process (Redis) conforms to ``SharedResponseStore`` as well, whose asynchronous methods the plugin calls
/// instead.
public protocol ResponseStore: Sendable {
    /// The keys of every stored variant of one resource for one user.
    ///
    /// - Parameter primaryKey: A ``CacheKey/primary`` value.
    /// - Returns: The keys, in no particular order; empty when nothing is stored.
    func variants(forPrimaryKey primaryKey: String) -> [CacheKey]

    /// Reads an entry and marks it as recently used.
    ///
    /// - Parameter key: The entry's key.
    /// - Returns: The entry, or `nil` when none is stored under `key`.
    /// - Throws: ``DiskCachePlugin/Error`` when an entry exists but cannot be read; a corrupt entry is removed first.
    func entry(for key: CacheKey) throws -> CachedEntry?

    /// Stores an entry, replacing any under the same key, and evicts least recently used entries beyond the
    /// store's bound.
    ///
    /// - Parameter entry: The entry.
    /// - Returns: What was evicted to make room.
    /// - Throws: ``DiskCachePlugin/Error`` when the entry could not be written; the store is unchanged then.
    @discardableResult
    func store(_ entry: CachedEntry) throws -> ResponseStoreUsage

    /// Removes one entry, if it is stored.
    ///
    /// - Parameter key: The entry's key.
    func remove(_ key: CacheKey)

    /// Removes every entry for a URL, whatever its method, user or variant: what an unsafe request invalidates.
    ///
    /// - Parameter url: A normalised URL, as in ``CacheKey/url``.
    /// - Returns: The number of entries removed.
    @discardableResult
    func removeEntries(forURL url: String) -> Int

    /// Removes every entry.
    func removeAll()

    /// The number of entries stored and their size.
    var usage: ResponseStoreUsage { get }
}
