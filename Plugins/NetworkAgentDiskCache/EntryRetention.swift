/// How long a stored entry is worth keeping, as the cache's rules see it when the entry is written: what a
/// ``ResponseStore`` in another process needs to let its backend expire the entry (a Redis TTL) instead of bounding
/// it itself. A store bounded by size (``DiskStore``, ``MemoryStore``) ignores it.
///
/// An entry is useful while it is fresh (``freshFor``), then while it may still answer stale
/// (``staleFor``: `stale-while-revalidate`, `stale-if-error` or the plugin's offline fallback, whichever is
/// longest), and after that only if it ``hasValidator``: a stale entry with an `ETag` or `Last-Modified` still
/// turns a full response into a `304 Not Modified`. How long to keep such entries is the store's choice.
public struct EntryRetention: Hashable, Sendable {
    /// How long from now the entry stays fresh; zero when it is stale already.
    public var freshFor: Duration
    /// How long past its freshness it may still answer without the origin; zero when it may not.
    public var staleFor: Duration
    /// Whether it carries a validator (`ETag` or `Last-Modified`), so it stays worth a conditional request.
    public var hasValidator: Bool

    /// Creates a retention figure.
    ///
    /// - Parameters:
    ///   - freshFor: See ``freshFor``; negative values count as zero.
    ///   - staleFor: See ``staleFor``; negative values count as zero.
    ///   - hasValidator: See ``hasValidator``.
    public init(freshFor: Duration, staleFor: Duration, hasValidator: Bool) {
        self.freshFor = max(.zero, freshFor)
        self.staleFor = max(.zero, staleFor)
        self.hasValidator = hasValidator
    }

    /// The time the entry can answer by itself: ``freshFor`` plus ``staleFor``.
    public var usableFor: Duration { freshFor + staleFor }
}
