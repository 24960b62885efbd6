import NetworkAgent

/// How a ``MetricsRegistry`` counts a plugin's ``/NetworkAgent/NetworkAgentEvent``.
///
/// | source | name | counted as |
/// |---|---|---|
/// | `retry` | `retry_scheduled` | ``retryScheduled`` → `networkagent_retries_total` |
/// | `token_refresh` | `refresh_succeeded`, `refresh_failed` | ``tokenRefresh(result:)`` with `succeeded` or `failed` |
/// | `cache` | `hit`, `miss`, `revalidated`, `stale` | ``cache(result:)`` with the name |
/// | anything else | | ``other(source:name:)`` → `networkagent_plugin_events_total` |
public enum MetricsEventKind: Hashable, Sendable {
    /// A retry plugin scheduled another attempt.
    case retryScheduled
    /// A token refresh finished: `succeeded` or `failed`.
    case tokenRefresh(result: String)
    /// A cache answered or looked up: `hit`, `miss`, `revalidated` or `stale`.
    case cache(result: String)
    /// Any other event, counted by source and name.
    case other(source: String, name: String)

    /// The names of the cache events counted as ``cache(result:)``.
    public static let cacheResults: Set<String> = ["hit", "miss", "revalidated", "stale"]

    /// Classifies an event by its source and name.
    ///
    /// - Parameter event: The event a plugin emitted.
    public init(_ event: NetworkAgentEvent) {
        switch (event.source, event.name) {
        case ("retry", "retry_scheduled"):
            self = .retryScheduled
        case ("token_refresh", "refresh_succeeded"):
            self = .tokenRefresh(result: "succeeded")
        case ("token_refresh", "refresh_failed"):
            self = .tokenRefresh(result: "failed")
        case ("cache", let name) where Self.cacheResults.contains(name):
            self = .cache(result: name)
        default:
            self = .other(source: event.source, name: event.name)
        }
    }
}
