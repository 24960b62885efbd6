import NetworkAgentDiskCache

extension EntryRetention {
    /// An hour of freshness, no stale window, no validator: what store tests write entries with when the
    /// retention does not matter to them.
    public static let anHour = EntryRetention(freshFor: .seconds(3_600), staleFor: .zero, hasValidator: false)
}

extension ResponseStore {
    /// The entry stored under `key`, read with ``/NetworkAgentDiskCache/ResponseStore/variants(forPrimaryKey:)``;
    /// `nil` when none is.
    ///
    /// - Parameter key: The entry's key.
    /// - Returns: The entry.
    /// - Throws: What the store's read throws.
    public func entry(for key: CacheKey) async throws -> CachedEntry? {
        try await variants(forPrimaryKey: key.primary).first { $0.key == key }
    }

    /// Stores an entry with a retention of ``/NetworkAgentDiskCache/EntryRetention/anHour``.
    ///
    /// - Parameter entry: The entry.
    /// - Returns: What was evicted.
    /// - Throws: What the store's write throws.
    @discardableResult
    public func store(_ entry: CachedEntry) async throws -> ResponseStoreUsage {
        try await store(entry, retention: .anHour)
    }
}
