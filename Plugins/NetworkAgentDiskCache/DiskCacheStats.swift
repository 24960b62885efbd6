/// A snapshot of what a ``DiskCachePlugin`` has done since it was created, and what its store holds.
///
/// Each counter matches one `cache` ``/NetworkAgent/NetworkAgentEvent`` name: a metrics plugin counting those events
/// sees the same numbers.
public struct DiskCacheStats: Hashable, Sendable {
    /// Requests answered from a fresh stored response without the network (`hit`).
    public var hits = 0
    /// Requests sent to the network without a usable stored response, or whose validation found a new one
    /// (`miss`); `only-if-cached` requests that got a 504 count here too.
    public var misses = 0
    /// Requests answered with a stale stored response: `max-stale`, `stale-while-revalidate`, `stale-if-error`
    /// or the offline fallback (`stale`).
    public var staleServed = 0
    /// Validations the origin answered with 304, foreground or background (`revalidated`).
    public var revalidated = 0
    /// Responses written to the store (`stored`).
    public var stored = 0
    /// Entries evicted to keep the store within its bound (`evicted`).
    public var evicted = 0
    /// Entries removed because an unsafe request changed their resource (`invalidated`).
    public var invalidated = 0
    /// Failures that degraded to a miss: unreadable or corrupt entries, failed writes, failed background
    /// refreshes (`error`).
    public var errors = 0
    /// The number of entries in the store now.
    public var entryCount = 0
    /// The bytes the store's entries take now.
    public var totalBytes = 0

    /// Creates a snapshot.
    public init() {}
}
