import Foundation
import NetworkAgent

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A private HTTP cache (RFC 9111) in the plugin chain: fresh responses are answered without the network, stale ones
/// are revalidated with `If-None-Match`/`If-Modified-Since`, and stored responses can stand in when the network
/// fails.
///
/// ```swift
/// let provider = NetworkAgentProvider<Api>(plugins: [.validate(), try .diskCache()])
/// ```
///
/// Register it innermost (last), so that a cached answer skips the network but not the plugins around it, which
/// see every answer; its `intercept` answers hits without calling `next`. What it does, with the RFC sections, is in
/// `Docs/DiskCache.md`; in short:
///
/// - stores responses to `GET` and `HEAD` that RFC 9111 §3 allows and that can be used later, under the URL they
///   came from (after redirects the transport followed, the final one; the redirects themselves are not seen);
/// - answers ``/NetworkAgent/NetworkAgentProvider/stream(endpoint:progress:)`` calls from the store too, but stores
///   nothing a stream fetched: its body goes to the caller, not through the chain;
/// - answers fresh ones at once (``CacheStatus/hit``), revalidates stale ones (a 304 is merged into the stored
///   response, §4.3.4, and the caller gets the stored status and body: ``CacheStatus/revalidated``);
/// - honours the request directives `no-cache`, `no-store`, `max-age`, `max-stale`, `min-fresh` and
///   `only-if-cached` (a 504 when nothing usable is stored) and the response's `stale-while-revalidate` (answer
///   stale, refresh once in the background) and `stale-if-error` (and ``Configuration/offlineFallback``);
/// - files variants by the request headers named in `Vary` and never serves `Vary: *`;
/// - keys entries by a fingerprint of the request's credentials, so one user never gets another's response;
/// - removes the entries of a URL (and of its `Location` and `Content-Location`) after a successful unsafe request.
///
/// Each answer carries ``Configuration/statusHeader`` (`X-NetworkAgent-Cache: hit|revalidated|stale|miss`; read it
/// with ``CacheStatus/init(response:header:)``) and, when it comes from the store, an `Age`. A `GET` for a single
/// byte range is answered from a stored complete 200 that needs no validation (206, or 416 when the range misses the
/// body); other ranges, and requests with conditional headers of their own, pass through untouched. Storage failures
/// never fail a request: they become misses and `cache.error` events.
///
/// Events (source `cache`): `hit`, `miss` (`reason`), `stale` (`reason`), `revalidated` (these four of kind
/// ``/NetworkAgent/NetworkAgentEvent/Kind/cacheHit`` and its siblings), `stored` (`bytes`),
/// `evicted` (`count`, `bytes`), `invalidated` (`count`), `error` (`reason`); ``stats`` counts the same.
public struct DiskCachePlugin: NetworkAgentPlugin {
    /// The ``/NetworkAgent/NetworkAgentEvent/source`` of the plugin's events: `cache`.
    public static let eventSource = "cache"
    /// The default response header telling how the cache answered: `X-NetworkAgent-Cache`.
    public static let defaultStatusHeader = "X-NetworkAgent-Cache"
    /// Methods that do not invalidate stored responses (RFC 9110 §9.2.1 safe methods).
    static let safeMethods: Set<String> = ["GET", "HEAD", "OPTIONS", "TRACE"]
    /// Request headers with which the caller takes over validation or asks for part of a resource: such requests
    /// bypass the cache.
    static let bypassHeaders = [
        "Range", "If-None-Match", "If-Modified-Since", "If-Match", "If-Unmodified-Since", "If-Range",
    ]

    /// Where responses are kept.
    public let store: any ResponseStore
    /// How the plugin behaves.
    public let configuration: Configuration
    let policy: CachePolicy
    let state = DiskCacheState()

    /// Creates a cache on a given store.
    ///
    /// - Parameters:
    ///   - store: Where responses are kept: a ``DiskStore``, a ``MemoryStore`` or your own.
    ///   - configuration: How the plugin behaves.
    public init(store: any ResponseStore, configuration: Configuration = Configuration()) {
        self.store = store
        self.configuration = configuration
        self.policy = configuration.policy
    }

    /// Creates a cache on the ``DiskStore`` of a directory.
    ///
    /// Plugins created on one directory in one process share its store (the first one opens it): two providers of
    /// an app can share a cache, and an entry stored through one is a hit for the other. The store keeps the bound
    /// and durability it was opened with, and closes when the last plugin using it goes.
    ///
    /// - Parameters:
    ///   - directory: The store's directory. Defaults to ``DiskStore/defaultDirectory``.
    ///   - maximumBytes: The store's bound, when this plugin opens it. Defaults to ``DiskStore/defaultMaximumBytes``.
    ///   - durability: What a completed write survives, when this plugin opens the store. Defaults to
    ///     ``DiskStore/Durability/processCrash``.
    ///   - configuration: How the plugin behaves.
    /// - Throws: ``DiskCachePlugin/Error`` with ``DiskCachePlugin/Error/Code/directoryLocked`` when another process, or a
    ///   ``DiskStore`` created directly in this one, holds the directory. An unusable directory does not throw: the
    ///   cache then misses and reports `cache.error` events.
    public init(
        directory: URL = DiskStore.defaultDirectory,
        maximumBytes: Int = DiskStore.defaultMaximumBytes,
        durability: DiskStore.Durability = .processCrash,
        configuration: Configuration = Configuration()
    ) throws(DiskCachePlugin.Error) {
        let store = try DiskStoreRegistry.store(
            directory: directory,
            maximumBytes: maximumBytes,
            durability: durability
        )
        self.init(store: store, configuration: configuration)
    }

    /// What the plugin has done so far and what its store holds.
    public var stats: DiskCacheStats {
        var stats = state.stats
        let usage = store.usage
        stats.entryCount = usage.entryCount
        stats.totalBytes = usage.totalBytes
        return stats
    }

    /// Answers `GET` and `HEAD` requests from the store where RFC 9111 allows, otherwise sends them and stores the
    /// answer; after a successful unsafe request, removes the stored responses it invalidates.
    ///
    /// - Parameters:
    ///   - request: The request.
    ///   - endpoint: The endpoint the call was made with.
    ///   - next: The rest of the exchange; not called for a fresh hit or an `only-if-cached` request.
    /// - Returns: The body and response, from the store or the network, with the status header.
    /// - Throws: What `next` throws, unless a stored response may stand in for the failure.
    public func intercept(
        _ request: URLRequest,
        endpoint: any NetworkAgentEndpoint,
        next: NetworkAgentExchange
    ) async throws -> (data: Data, response: URLResponse) {
        // Every store call made for this request is bounded by the request's own deadline (StoreDeadline).
        try await StoreDeadline.$current.withValue(.now + Self.duration(of: request.timeoutInterval)) {
            try await answer(request, endpoint: endpoint, next: next)
        }
    }

    /// `Duration(timeInterval:)` of a request's timeout, without its exact conversion of a `Double` (`.seconds(_:)`,
    /// 128-bit arithmetic) for a whole number of seconds (60 unless the endpoint says otherwise), which is exactly
    /// `.seconds` of that integer.
    static func duration(of timeout: TimeInterval) -> Duration {
        // NaN and infinities fail one of the two comparisons; 9.2e18 is Duration(timeInterval:)'s own bound.
        if timeout.rounded(.towardZero) == timeout, abs(timeout) < 9.2e18 { return .seconds(Int64(timeout)) }
        return Duration(timeInterval: timeout)
    }

    /// ``intercept(_:endpoint:next:)``, within the request's store deadline.
    private func answer(
        _ request: URLRequest,
        endpoint: any NetworkAgentEndpoint,
        next: NetworkAgentExchange
    ) async throws -> (data: Data, response: URLResponse) {
        let method = (request.httpMethod ?? "GET").uppercased()
        guard method == "GET" || method == "HEAD" else {
            return try await forwardUncached(request, method: method, next: next)
        }
        // The request's fields are taken out once for every lookup below.
        let fields = RequestFields(request)
        if method == "GET", let range = Self.servableRange(fields) {
            return try await answerRange(range, of: request, endpoint: endpoint, next: next)
        }
        guard !fields.containsAny(of: Self.bypassHeaders),
            let key = CacheKey(request: request, fields: fields)
        else {
            return try await next(request)
        }
        let directives = CacheControl(
            requestCacheControl: fields.value("Cache-Control"),
            pragma: fields.value("Pragma")
        )
        let exchange = DiskCacheExchange(
            plugin: self,
            request: request,
            endpoint: endpoint,
            method: method,
            directives: directives,
            next: next,
            lookupKey: key
        )
        let (stored, reason) = await lookup(key, request: request)
        guard let stored else {
            if directives.onlyIfCached { return exchange.onlyIfCachedFailure(reason: reason) }
            if reason == "vary_mismatch" {
                let variants = await variantsWithETags(key)
                if !variants.isEmpty { return try await exchange.validateVariants(variants) }
            }
            return try await exchange.fetchCollapsed(key, reason: reason)
        }
        return try await answer(from: stored, exchange: exchange, directives: directives, method: method)
    }

    /// Answers a request that has a stored variant: from the store when the policy says it may, by validating it
    /// with the origin, or by fetching anew (`no_validator`, or `unbuildable` when Foundation refused to rebuild the
    /// stored response).
    private func answer(
        from stored: CachedEntry,
        exchange: DiskCacheExchange,
        directives: CacheControl,
        method: String
    ) async throws -> (data: Data, response: URLResponse) {
        let now = configuration.now()
        // The stored response's fields are parsed once, for the decision and the answer.
        let facts = policy.facts(of: stored)
        let decision = policy.decide(stored, request: directives, now: now, facts: facts)
        switch decision {
        case .fresh:
            if let answer = exchange.answer(with: stored, status: .hit, now: now, facts: facts) {
                state.record("hit", ["method": method])
                return answer
            }
        case .staleAccepted:
            if let answer = exchange.answer(with: stored, status: .stale, now: now, facts: facts) {
                state.record("stale", ["method": method, "reason": "max_stale"])
                return answer
            }
        case .staleWhileRevalidate:
            if let answer = exchange.answer(with: stored, status: .stale, now: now, facts: facts) {
                state.record("stale", ["method": method, "reason": "stale_while_revalidate"])
                exchange.refreshInBackground(stored)
                return answer
            }
        case .validate:
            if directives.onlyIfCached { return exchange.onlyIfCachedFailure(reason: "needs_validation") }
            return try await exchange.validateCoalesced(stored)
        case .fetch:
            break
        }
        // Not usable as is and no validator (or, rarely, Foundation refused to rebuild the stored response).
        let why = decision == .fetch ? "no_validator" : "unbuildable"
        if directives.onlyIfCached { return exchange.onlyIfCachedFailure(reason: why) }
        state.record("miss", ["method": method, "reason": why])
        return try await exchange.fetch(fallback: stored)
    }

    /// Sends a request whose method is not cached (anything but `GET` and `HEAD`) and, for an unsafe method,
    /// invalidates the stored responses it may have changed (RFC 9111 §4.4).
    private func forwardUncached(
        _ request: URLRequest,
        method: String,
        next: NetworkAgentExchange
    ) async throws -> (data: Data, response: URLResponse) {
        let result = try await next(request)
        if !Self.safeMethods.contains(method) { await invalidate(after: request, response: result.response) }
        return result
    }

    /// The stored variant that matches the request, and if there is none, why (`not_stored`, `vary_mismatch`,
    /// `error`).
    func lookup(_ key: CacheKey, request: URLRequest) async -> (CachedEntry?, reason: String) {
        let entries: [CachedEntry]
        do {
            entries = try await store.variants(forPrimaryKey: key.primary)
        } catch {
            recordError(error)
            return (nil, "error")
        }
        guard !entries.isEmpty else { return (nil, "not_stored") }
        let match = entries.first { Self.selects(request, key: key, variant: $0.key) }
        return match.map { ($0, "") } ?? (nil, "vary_mismatch")
    }

    /// The stored variants of a resource that carry an `ETag`, to validate a request that matches none of them
    /// with (RFC 9111 §4.3.1); unreadable ones are left out.
    private func variantsWithETags(_ key: CacheKey) async -> [CachedEntry] {
        let entries = (try? await store.variants(forPrimaryKey: key.primary)) ?? []
        return entries.filter { $0.header("ETag") != nil && !$0.key.varyNames.contains("*") }
    }

    /// Whether a stored variant answers a request whose key, without varying headers, is `key` (RFC 9111 §4.1).
    static func selects(_ request: URLRequest, key: CacheKey, variant: CacheKey) -> Bool {
        guard !variant.varyNames.contains("*") else { return false }
        let candidate = variant.varyNames.isEmpty ? key : CacheKey(request: request, varyNames: variant.varyNames)
        return candidate == variant
    }

    /// Removes the stored responses an unsafe request with a non-error answer invalidates (RFC 9111 §4.4): its
    /// URL's, and those of `Location` and `Content-Location` when they are on the same origin.
    private func invalidate(after request: URLRequest, response: URLResponse) async {
        guard let http = response as? HTTPURLResponse, (200..<400).contains(http.statusCode), let url = request.url
        else { return }
        var targets = [url]
        for name in ["Location", "Content-Location"] {
            guard let value = http.value(forHTTPHeaderField: name),
                let target = URL(string: value, relativeTo: url)?.absoluteURL,
                target.scheme?.lowercased() == url.scheme?.lowercased(),
                target.host?.lowercased() == url.host?.lowercased(), target.port == url.port
            else { continue }
            targets.append(target)
        }
        var removed = 0
        for target in Set(targets.compactMap(CacheKey.normalizedURL)) {
            removed += await store.removeEntries(forURL: target)
        }
        if removed > 0 {
            state.record(
                "invalidated",
                ["method": (request.httpMethod ?? "").uppercased(), "count": "\(removed)"],
                count: removed
            )
        }
    }

    /// Reports a storage failure as a `cache.error` event.
    func recordError(_ error: any Swift.Error, phase: String? = nil) {
        var attributes = ["reason": (error as? DiskCachePlugin.Error)?.code.description ?? "store_failed"]
        if let phase { attributes["phase"] = phase }
        state.record("error", attributes)
    }
}

extension NetworkAgentPlugin where Self == DiskCachePlugin {
    /// A private HTTP cache on the ``DiskStore`` of a directory, shared with the other plugins on that directory
    /// in this process.
    ///
    /// - Parameters:
    ///   - directory: The store's directory. Defaults to ``DiskStore/defaultDirectory``.
    ///   - maximumBytes: The store's bound, when this plugin opens it. Defaults to ``DiskStore/defaultMaximumBytes``.
    ///   - durability: What a completed write survives, when this plugin opens the store. Defaults to
    ///     ``DiskStore/Durability/processCrash``.
    ///   - configuration: How the plugin behaves.
    /// - Returns: A ``DiskCachePlugin``.
    /// - Throws: ``DiskCachePlugin/Error`` with ``DiskCachePlugin/Error/Code/directoryLocked`` when another process, or a
    ///   ``DiskStore`` created directly in this one, holds the directory.
    public static func diskCache(
        directory: URL = DiskStore.defaultDirectory,
        maximumBytes: Int = DiskStore.defaultMaximumBytes,
        durability: DiskStore.Durability = .processCrash,
        configuration: DiskCachePlugin.Configuration = DiskCachePlugin.Configuration()
    ) throws(DiskCachePlugin.Error) -> DiskCachePlugin {
        try DiskCachePlugin(
            directory: directory,
            maximumBytes: maximumBytes,
            durability: durability,
            configuration: configuration
        )
    }

    /// A private HTTP cache on a store of your choice, e.g. a ``MemoryStore``.
    ///
    /// - Parameters:
    ///   - store: Where responses are kept.
    ///   - configuration: How the plugin behaves.
    /// - Returns: A ``DiskCachePlugin``.
    public static func cache(
        store: any ResponseStore,
        configuration: DiskCachePlugin.Configuration = DiskCachePlugin.Configuration()
    ) -> DiskCachePlugin {
        DiskCachePlugin(store: store, configuration: configuration)
    }
}
