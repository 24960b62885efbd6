/// Where a ``DiskCachePlugin`` keeps responses: ``DiskStore`` (the default), ``MemoryStore``, a store in another
/// process shared by many (`RedisStore` of `NetworkAgentRedisCache`), or your own.
///
/// A store files entries under their ``CacheKey``; it knows nothing of HTTP semantics. Implementations must be
/// thread-safe (one store serves many concurrent requests), must never hand out an entry that was not stored
/// whole, and should bound their size, evicting least recently used entries.
///
/// The plugin calls every operation asynchronously. A store that waits on the network must never block a thread of
/// Swift's cooperative pool while it waits: it suspends, and resumes when its own thread or event loop has the
/// answer, and it bounds each call (a request never waits on its store for long). A local store may implement the
/// operations synchronously (``DiskStore`` and ``MemoryStore`` do: a synchronous method satisfies an asynchronous
/// requirement), and its own users then call it without `await`.
///
/// A shared store is best effort: one that cannot reach its backend answers nothing, removes nothing and reports an
/// error, and the cache goes to the origin.
///
/// Revalidation coalescing across processes is optional: the default ``claimRevalidation(of:)`` always grants the
/// claim, so every process revalidates for itself.
public protocol ResponseStore: Sendable {
    /// Every stored variant of one resource for one user, read in one go.
    ///
    /// A stored entry that cannot be read (corrupt, truncated, written by something else) is removed, and reported:
    /// the store either throws ``DiskCachePlugin/Error`` with ``DiskCachePlugin/Error/Code/corruptEntry``, or leaves
    /// it out and emits a `cache.error` event itself.
    ///
    /// - Parameter primaryKey: A ``CacheKey/primary`` value.
    /// - Returns: The entries, in no particular order; empty when nothing is stored.
    /// - Throws: When the store could not be read; the plugin treats it as a miss.
    func variants(forPrimaryKey primaryKey: String) async throws -> [CachedEntry]

    /// The keys of every stored variant of one resource for one user, for removing variants without reading them.
    ///
    /// A store that knows its keys without reading the entries answers from them; one that does not may answer
    /// with the keys of what ``variants(forPrimaryKey:)`` reads.
    ///
    /// - Parameter primaryKey: A ``CacheKey/primary`` value.
    /// - Returns: The keys, in no particular order; empty when nothing is stored or the store could not be read.
    func variantKeys(forPrimaryKey primaryKey: String) async -> [CacheKey]

    /// Stores an entry, replacing any under the same key, and evicts least recently used entries beyond the
    /// store's bound, or lets its backend expire the entry once `retention` says it is of no more use.
    ///
    /// - Parameters:
    ///   - entry: The entry.
    ///   - retention: How long the entry can be useful, for a backend that expires entries by time (a Redis TTL);
    ///     a store bounded by size alone ignores it.
    /// - Returns: What was evicted to make room, where the store knows it.
    /// - Throws: When the entry was not stored; the store is unchanged then.
    @discardableResult
    func store(_ entry: CachedEntry, retention: EntryRetention) async throws -> ResponseStoreUsage

    /// Removes one entry, if it is stored. A failure is not reported: a removal is best effort.
    ///
    /// - Parameter key: The entry's key.
    func remove(_ key: CacheKey) async

    /// Removes every entry for a URL, whatever its method, user or variant: what an unsafe request invalidates.
    ///
    /// - Parameter url: A normalised URL, as in ``CacheKey/url``.
    /// - Returns: The number of entries removed; zero when the store could not be asked.
    @discardableResult
    func removeEntries(forURL url: String) async -> Int

    /// Removes every entry.
    func removeAll() async

    /// The number of entries stored and their size, as this process knows them (empty for a store whose backend
    /// holds the entries of many processes).
    var usage: ResponseStoreUsage { get }

    /// Asks to be the one process that revalidates a stale entry now.
    ///
    /// A store that coalesces revalidation takes a short-lived lock shared by every process (Redis
    /// `SET NX PX`) and answers `false` while another holder has it; the plugin then serves the stale entry where
    /// `stale-while-revalidate` allows, or waits up to ``revalidationWaitLimit`` for the fresh entry the holder
    /// stores. A store that cannot reach its lock answers `true`: a request is never held up by the lock.
    ///
    /// - Parameter key: The key of the stale entry.
    /// - Returns: Whether the caller should revalidate. Defaults to `true`.
    func claimRevalidation(of key: CacheKey) async -> Bool

    /// Releases a claim granted by ``claimRevalidation(of:)``, after the revalidated entry was stored (or the
    /// revalidation failed). The default does nothing.
    ///
    /// - Parameter key: The key given to ``claimRevalidation(of:)``.
    func releaseRevalidation(of key: CacheKey) async

    /// How long a request that needs a stale entry revalidated waits for another process's revalidation before
    /// sending its own. Defaults to zero: no waiting.
    var revalidationWaitLimit: Duration { get }
}

extension ResponseStore {
    /// Grants every claim: no coalescing across processes.
    ///
    /// - Parameter key: The key of the stale entry.
    /// - Returns: `true`.
    public func claimRevalidation(of key: CacheKey) async -> Bool { true }

    /// Does nothing.
    ///
    /// - Parameter key: The key given to ``claimRevalidation(of:)``.
    public func releaseRevalidation(of key: CacheKey) async {}

    /// Zero: a store without coalescing never makes a request wait.
    public var revalidationWaitLimit: Duration { .zero }
}
