import NetworkAgent

/// The mutable part of a ``DiskCachePlugin``, shared by its copies: the counters behind ``DiskCacheStats``, the
/// keys being refreshed in the background and the misses being fetched (collapsed forwarding).
final class DiskCacheState: Sendable {
    private let counters = Locked(DiskCacheStats())
    /// The responses of recent answers from the store, for answers with the same inputs.
    let hitMemo = HitMemo()
    private let refreshing = Locked(Set<String>())
    /// The misses being fetched by one request for the others, and the resources whose misses are not collapsed.
    private let misses = Locked(MissRegistry())

    /// How long the misses of a resource go to the origin without waiting for each other, after a collapsed fetch
    /// whose response did not answer its waiters from the store (Varnish's hit-for-miss): 30 seconds.
    static let uncollapsedPeriod: Duration = .seconds(30)
    /// The most resources remembered as not worth collapsing; past it, expired ones are forgotten, then all.
    static let uncollapsedLimit = 1_024

    /// See ``misses``.
    private struct MissRegistry {
        /// The fetch running for each primary key.
        var flights: [String: RunningMiss] = [:]
        /// Until when the misses of a primary key are fetched alone.
        var uncollapsed: [String: ContinuousClock.Instant] = [:]
        /// The number of the next fetch to start (``MissLead``).
        var nextLead: UInt64 = 0
    }

    /// A fetch running for the misses of one primary key: which one (its leader's ``MissLead``), and the flight its
    /// waiters wait on, made when the first of them joins: most misses are waited for by nobody, and a flight is an
    /// object and a lock of its own.
    private struct RunningMiss {
        let lead: MissLead
        var flight: MissFlight?
    }

    /// Counts an event and emits it with source `cache`; its attributes are built only when an observer would get
    /// it (a dictionary per hit and miss otherwise).
    func record(_ name: String, _ attributes: @autoclosure () -> [String: String] = [:], count: Int = 1) {
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
        guard NetworkAgentEvents.hasObservers else { return }
        NetworkAgentEvents.emit(NetworkAgentEvent(Self.kind(of: name), attributes: attributes()))
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

    /// The fetch one request leads for the others missing its primary key, told apart from later fetches of the
    /// same key.
    struct MissLead: Sendable, Equatable {
        fileprivate let number: UInt64
    }

    /// What a request that misses does about the other requests missing the same primary key.
    enum MissRole {
        /// Nobody is fetching it: this request fetches, and ends the fetch with ``finishMiss(_:lead:outcome:)``.
        case leader(MissLead)
        /// Another request is fetching it: wait for its ``MissFlight/Outcome``.
        case waiter(MissFlight)
        /// Nobody is fetching it and this request may not fetch for others: it fetches alone.
        case alone
    }

    /// Joins the fetch of a missing response: leads it when none is running and `mayLead`, otherwise waits for it;
    /// alone when the resource's misses are not collapsed for now (``markUncollapsed(_:)``).
    ///
    /// - Parameters:
    ///   - key: The primary key of the request (``CacheKey/primary``): method, URL and credential fingerprint.
    ///   - mayLead: Whether this request's response can be stored for the others (not streamed, no `no-store`).
    func joinMiss(_ key: String, mayLead: Bool) -> MissRole {
        let now = ContinuousClock.now
        return misses.withLock { misses in
            if let until = misses.uncollapsed[key] {
                if now < until { return .alone }
                misses.uncollapsed[key] = nil
            }
            if var running = misses.flights[key] {
                if let flight = running.flight { return .waiter(flight) }
                // The first waiter: the flight is made now, and found by the leader when it finishes.
                let flight = MissFlight()
                running.flight = flight
                misses.flights[key] = running
                return .waiter(flight)
            }
            guard mayLead else { return .alone }
            let lead = MissLead(number: misses.nextLead)
            misses.nextLead &+= 1
            misses.flights[key] = RunningMiss(lead: lead, flight: nil)
            return .leader(lead)
        }
    }

    /// Lets the misses of a resource go to the origin alone for ``uncollapsedPeriod``: a collapsed fetch of it
    /// stored nothing its waiters could use (`no-store`, an error status), so waiting for the next one would only
    /// delay them.
    func markUncollapsed(_ key: String) {
        let now = ContinuousClock.now
        misses.withLock { misses in
            if misses.uncollapsed.count >= Self.uncollapsedLimit {
                misses.uncollapsed = misses.uncollapsed.filter { now < $0.value }
                if misses.uncollapsed.count >= Self.uncollapsedLimit { misses.uncollapsed = [:] }
            }
            misses.uncollapsed[key] = now + Self.uncollapsedPeriod
        }
    }

    /// The number of requests waiting for another's fetch of a miss now.
    var missWaiterCount: Int {
        misses.withLock { misses in misses.flights.values.reduce(0) { $0 + ($1.flight?.waiterCount ?? 0) } }
    }

    /// Ends a fetch led by the caller and wakes its waiters, if any joined, with `outcome`.
    func finishMiss(_ key: String, lead: MissLead, outcome: MissFlight.Outcome) {
        let flight = misses.withLock { misses -> MissFlight? in
            guard let running = misses.flights[key], running.lead == lead else { return nil }
            misses.flights[key] = nil
            return running.flight
        }
        flight?.finish(outcome)
    }
}
