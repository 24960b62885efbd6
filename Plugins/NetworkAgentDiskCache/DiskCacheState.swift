import NetworkAgent

/// The mutable part of a ``DiskCachePlugin``, shared by its copies: the counters behind ``DiskCacheStats`` and the
/// keys being refreshed in the background.
final class DiskCacheState: Sendable {
    private let counters = Locked(DiskCacheStats())
    private let refreshing = Locked(Set<String>())

    /// Counts an event and emits it with source `cache`.
    func record(_ name: String, _ attributes: [String: String] = [:], count: Int = 1) {
        counters.withLock { stats in
            switch name {
            case "hit": stats.hits += count
            case "miss": stats.misses += count
            case "stale": stats.staleServed += count
            case "revalidated": stats.revalidated += count
            case "stored": stats.stored += count
            case "evicted": stats.evicted += count
            case "invalidated": stats.invalidated += count
            case "error": stats.errors += count
            default: break
            }
        }
        NetworkAgentEvents.emit(NetworkAgentEvent(Self.kind(of: name), attributes: attributes))
    }

    /// A lookup result (`hit`, `miss`, `revalidated`, `stale`) is the typed cache kind a metrics plugin counts
    /// (``/NetworkAgent/NetworkAgentEvent/Kind/cacheHit`` and its siblings); the rest are `other`.
    private static func kind(of name: String) -> NetworkAgentEvent.Kind {
        switch name {
        case "hit": .cacheHit
        case "miss": .cacheMiss
        case "revalidated": .cacheRevalidated
        case "stale": .cacheStale
        default: .other(source: DiskCachePlugin.eventSource, name: name)
        }
    }

    /// The counters so far.
    var stats: DiskCacheStats { counters.withLock { $0 } }

    /// Claims the background refresh of an entry; `false` when one is already running.
    func beginRefresh(_ id: String) -> Bool {
        refreshing.withLock { $0.insert(id).inserted }
    }

    /// Releases the claim of ``beginRefresh(_:)``.
    func endRefresh(_ id: String) {
        refreshing.withLock { _ = $0.remove(id) }
    }
}
