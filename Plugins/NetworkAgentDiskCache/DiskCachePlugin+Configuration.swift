import Foundation
import NetworkAgent

extension DiskCachePlugin {
    /// How a ``DiskCachePlugin`` behaves, beyond what the responses' own directives say.
    public struct Configuration: Sendable {
        /// The fraction of the time since `Last-Modified` used as the freshness lifetime of a response without an
        /// explicit one: 10 %, as RFC 9111 §4.2.2 suggests.
        public static let defaultHeuristicFraction = 0.1
        /// The longest heuristic freshness lifetime: one day (RFC 7234 §4.2.2, the predecessor of RFC 9111, had
        /// caches warn past 24 hours).
        public static let defaultMaximumHeuristicLifetime: Duration = .seconds(86_400)
        /// The largest response body stored: 8 MiB. Larger responses pass through unstored.
        public static let defaultMaximumEntryBytes = 8 << 20
        /// The longest a request that misses waits for another request fetching the same resource: 2 seconds.
        public static let defaultMissWaitLimit: Duration = .seconds(2)

        /// The response header that tells how the cache answered (see ``CacheStatus``); `nil` adds none.
        /// Defaults to ``DiskCachePlugin/defaultStatusHeader``.
        public var statusHeader: String?
        /// How long past its freshness a stored response may still answer when the network fails or the origin
        /// answers 500, 502, 503 or 504 — as if every response carried `stale-if-error` (RFC 5861 §4). Responses
        /// with `no-cache` or `must-revalidate` are never served stale (RFC 9111 §4.2.4). `nil` (the default)
        /// serves stale on errors only where a response or request says `stale-if-error`.
        public var offlineFallback: Duration?
        /// See ``defaultHeuristicFraction``.
        public var heuristicFraction: Double
        /// See ``defaultMaximumHeuristicLifetime``.
        public var maximumHeuristicLifetime: Duration
        /// See ``defaultMaximumEntryBytes``.
        public var maximumEntryBytes: Int
        /// How long, at most, a request that finds nothing stored waits for another request that is fetching the
        /// same resource (same method, URL and credentials) in this process, or, on a shared store that coalesces,
        /// in another process, instead of going to the origin itself (collapsed forwarding). A response stored
        /// meanwhile answers it as a ``CacheStatus/hit``; past the bound, or when that response is not stored or
        /// does not match it, it fetches for itself. Zero sends every miss to the origin. Defaults to
        /// ``defaultMissWaitLimit``.
        public var missWaitLimit: Duration
        /// The wall clock for ages and freshness (HTTP dates are wall-clock times). Tests inject their own.
        public var now: @Sendable () -> Date

        /// Creates a configuration.
        ///
        /// - Parameters:
        ///   - statusHeader: See ``statusHeader``.
        ///   - offlineFallback: See ``offlineFallback``.
        ///   - heuristicFraction: See ``heuristicFraction``.
        ///   - maximumHeuristicLifetime: See ``maximumHeuristicLifetime``.
        ///   - maximumEntryBytes: See ``maximumEntryBytes``.
        ///   - missWaitLimit: See ``missWaitLimit``.
        ///   - now: See ``now``.
        public init(
            statusHeader: String? = DiskCachePlugin.defaultStatusHeader,
            offlineFallback: Duration? = nil,
            heuristicFraction: Double = defaultHeuristicFraction,
            maximumHeuristicLifetime: Duration = defaultMaximumHeuristicLifetime,
            maximumEntryBytes: Int = defaultMaximumEntryBytes,
            missWaitLimit: Duration = defaultMissWaitLimit,
            now: @escaping @Sendable () -> Date = { Date() }
        ) {
            self.statusHeader = statusHeader
            self.offlineFallback = offlineFallback
            self.heuristicFraction = heuristicFraction
            self.maximumHeuristicLifetime = maximumHeuristicLifetime
            self.maximumEntryBytes = maximumEntryBytes
            self.missWaitLimit = missWaitLimit
            self.now = now
        }

        /// The RFC 9111 rules with these settings.
        var policy: CachePolicy {
            CachePolicy(
                heuristicFraction: max(0, heuristicFraction),
                maximumHeuristicLifetime: max(0, maximumHeuristicLifetime.timeInterval),
                offlineFallback: max(0, offlineFallback?.timeInterval ?? 0)
            )
        }
    }
}
