/// How a ``DiskCachePlugin`` reaches its store: the synchronous ``ResponseStore`` operations for a local store
/// (``DiskStore``, ``MemoryStore``: unchanged behaviour), the asynchronous ones of ``SharedResponseStore`` for a
/// store in another process, so that waiting on it never blocks a thread of the cooperative pool.
struct ResponseStoreAccess: Sendable {
    let store: any ResponseStore
    /// The same store as a shared one, when it is.
    let shared: (any SharedResponseStore)?

    init(_ store: any ResponseStore) {
        self.store = store
        self.shared = store as? any SharedResponseStore
    }

    /// The keys of every stored variant of one resource for one user.
    func variants(forPrimaryKey primaryKey: String) async -> [CacheKey] {
        guard let shared else { return store.variants(forPrimaryKey: primaryKey) }
        return ((try? await shared.storedVariants(forPrimaryKey: primaryKey)) ?? []).map(\.key)
    }

    /// Stores an entry for as long as `retention` says (worked out only for a shared store).
    @discardableResult
    func store(_ entry: CachedEntry, retention: () -> EntryRetention) async throws -> ResponseStoreUsage {
        guard let shared else { return try store.store(entry) }
        return try await shared.store(entry, retention: retention())
    }

    /// Removes one entry.
    func remove(_ key: CacheKey) async {
        guard let shared else { return store.remove(key) }
        await shared.removeEntry(key)
    }

    /// Removes every entry for a normalised URL; returns how many.
    func removeEntries(forURL url: String) async -> Int {
        guard let shared else { return store.removeEntries(forURL: url) }
        return await shared.removeEntries(matchingURL: url)
    }
}
