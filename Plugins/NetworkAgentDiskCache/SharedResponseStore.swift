/// A ``ResponseStore`` in another process, shared by many (a Redis server for a fleet of replicas): the plugin calls
/// its asynchronous operations instead of the synchronous ones of ``ResponseStore``.
///
/// A shared store waits on the network. Its implementation must never block a thread of Swift's cooperative pool
/// while it waits: it suspends, and resumes when its own thread or event loop has the answer. The synchronous
/// requirements of ``ResponseStore`` stay for code outside a cache plugin (they may block their caller).
///
/// Everything here is best effort: a store that cannot reach its backend answers nothing, removes nothing and
/// reports an error, and the cache goes to the origin. Implementations must be thread-safe.
///
/// Revalidation coalescing is optional: the default ``claimRevalidation(of:)`` always grants the claim, so every
/// process revalidates for itself.
public protocol SharedResponseStore: ResponseStore {
    /// Every stored variant of one resource for one user, read in one go.
    ///
    /// A stored value that does not decode (corrupt, truncated, written by something else) is left out, removed
    /// and reported by the store itself.
    ///
    /// - Parameter primaryKey: A ``CacheKey/primary`` value.
    /// - Returns: The entries, in no particular order; empty when nothing is stored.
    /// - Throws: When the backend could not be asked; the plugin treats it as a miss.
    func storedVariants(forPrimaryKey primaryKey: String) async throws -> [CachedEntry]

    /// Stores an entry, replacing any under the same key, for as long as `retention` says it is worth keeping.
    ///
    /// - Parameters:
    ///   - entry: The entry.
    ///   - retention: How long the entry can be useful, for the backend's expiry.
    /// - Returns: What was evicted to make room, where the store knows it.
    /// - Throws: When the entry was not stored; the store is unchanged then.
    @discardableResult
    func store(_ entry: CachedEntry, retention: EntryRetention) async throws -> ResponseStoreUsage

    /// Removes one entry, if it is stored.
    ///
    /// - Parameter key: The entry's key.
    func removeEntry(_ key: CacheKey) async

    /// Removes every entry for a URL, whatever its method, user or variant.
    ///
    /// - Parameter url: A normalised URL, as in ``CacheKey/url``.
    /// - Returns: The number of entries removed.
    @discardableResult
    func removeEntries(matchingURL url: String) async -> Int

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

extension SharedResponseStore {
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
