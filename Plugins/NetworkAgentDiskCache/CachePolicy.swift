import Foundation
import NetworkAgent

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The rules of RFC 9111 for a private cache, as pure functions of a stored response, a request's directives and
/// the current time: whether a response may be stored (§3), how long it stays fresh (§4.2.1, §4.2.2), how old it
/// is (§4.2.3), and whether it may answer a request as is, stale, or only after validation (§4, §4.2.4, §4.3).
struct CachePolicy: Sendable {
    /// What to do with a stored response for one request.
    enum Decision: Equatable, Sendable {
        /// Fresh enough for the request: answer with it, no network (§4.2).
        case fresh
        /// Stale, but the request accepts it (`max-stale`, §5.2.1.2): answer with it, no network.
        case staleAccepted
        /// Stale within the response's `stale-while-revalidate` window (RFC 5861 §3): answer with it and refresh
        /// it in the background.
        case staleWhileRevalidate
        /// Not usable as is, but it has a validator: send a conditional request (§4.3.1).
        case validate
        /// Not usable and cannot be validated: send the request as is.
        case fetch
    }

    /// Status codes that are heuristically cacheable (RFC 9110 §15.1), minus 206: this cache does not combine
    /// partial content.
    static let heuristicallyCacheableStatusCodes: Set<Int> = [200, 203, 204, 300, 301, 308, 404, 405, 410, 414, 501]

    /// Status codes whose caching semantics this cache implements, for `must-understand` (RFC 9111 §5.2.2.3).
    static let understoodStatusCodes: Set<Int> = heuristicallyCacheableStatusCodes.union([302, 303, 307])

    /// Server errors after which a stale response may be served under `stale-if-error` (RFC 5861 §4).
    static let staleIfErrorStatusCodes: Set<Int> = [500, 502, 503, 504]

    /// Header fields never stored or merged (RFC 9111 §3.1: hop-by-hop and proxy fields).
    static let unstorableHeaders: Set<String> = [
        "connection", "keep-alive", "proxy-connection", "te", "transfer-encoding", "upgrade", "proxy-authenticate",
        "proxy-authentication-info", "proxy-authorization",
    ]

    /// Header fields a 304 does not update (§3.2): the stored body is the transport's decoded body, so its length
    /// and content coding must stay those of the first response.
    static let headersNotUpdatedBy304: Set<String> = ["content-length", "content-encoding", "content-range"]

    /// The fraction of the time since `Last-Modified` used as a heuristic lifetime (§4.2.2 suggests 10 %).
    var heuristicFraction: Double
    /// The longest heuristic lifetime.
    var maximumHeuristicLifetime: TimeInterval
    /// A `stale-if-error` window applied to every response that does not forbid stale answers; 0 for none.
    var offlineFallback: TimeInterval

    // MARK: Storing (§3)

    /// Whether a response to a request may be stored at all (RFC 9111 §3, for a private cache).
    ///
    /// - Parameters:
    ///   - method: The request method.
    ///   - request: The request's directives.
    ///   - entry: The response, as it would be stored.
    /// - Returns: Whether storing it is allowed.
    ///   - facts: The response's parsed fields, when the caller has them (``facts(of:)``).
    func mayStore(method: String, request: CacheControl, entry: CachedEntry, facts: Facts? = nil) -> Bool {
        guard method == "GET" || method == "HEAD" else { return false }
        let status = entry.statusCode
        guard status >= 200, status != 206, status != 304 else { return false }
        let response = facts?.directives ?? CacheControl(entry.header("Cache-Control"))
        if request.noStore { return false }
        if response.mustUnderstand {
            // §5.2.2.3: a cache that understands the status code ignores no-store; one that does not, stores nothing.
            guard Self.understoodStatusCodes.contains(status) else { return false }
        } else if response.noStore {
            return false
        }
        if entry.key.varyNames.contains("*") { return false }
        return response.isPublic || response.isPrivate || entry.header("Expires") != nil || response.maxAge != nil
            || Self.heuristicallyCacheableStatusCodes.contains(status)
    }

    /// Whether a storable response is worth storing: it can answer a later request directly, after validation, or
    /// as a stale fallback. A response that is stale at once, has no validator and may never be served stale is
    /// not written (it would only cost disk traffic).
    func isWorthStoring(_ entry: CachedEntry, facts: Facts? = nil) -> Bool {
        let facts = facts ?? self.facts(of: entry)
        let response = facts.directives
        if facts.hasValidator { return true }
        if response.noCache { return false }
        if facts.lifetime > 0 { return true }
        if response.mustRevalidate { return false }
        return offlineFallback > 0 || (response.staleIfError?.seconds ?? 0) > 0
            || (response.staleWhileRevalidate?.seconds ?? 0) > 0
    }

    // MARK: Freshness (§4.2)

    /// What the rules read from a stored response's own fields, parsed once per use of the response: its
    /// `Cache-Control`, `Date` and `Age` values, its freshness lifetime and whether it has a validator. (A hit
    /// asks several of the questions below; each used to parse the fields again.)
    struct Facts {
        /// The response's `Cache-Control` directives.
        let directives: CacheControl
        /// The `Date` field, or the response time when it is missing or invalid.
        let date: Date
        /// The `Age` field's delta-seconds, 0 when absent or invalid.
        let ageValue: TimeInterval
        /// ``freshnessLifetime(of:)``.
        let lifetime: TimeInterval
        /// ``hasValidator(_:)``.
        let hasValidator: Bool
    }

    /// Parses what the rules read from a stored response.
    func facts(of entry: CachedEntry) -> Facts {
        let directives = CacheControl(entry.header("Cache-Control"))
        let date = dateValue(of: entry)
        return Facts(
            directives: directives,
            date: date,
            ageValue: TimeInterval(CacheControl.age(entry.header("Age")) ?? 0),
            lifetime: freshnessLifetime(of: entry, directives: directives, date: date),
            hasValidator: hasValidator(entry)
        )
    }

    /// The freshness lifetime (RFC 9111 §4.2.1): `max-age`, else `Expires` minus `Date`, else the heuristic of
    /// §4.2.2 (a fraction of the time since `Last-Modified`, for heuristically cacheable or `public` responses).
    /// `s-maxage` is for shared caches and ignored. An invalid `max-age` or `Expires` means already expired.
    func freshnessLifetime(of entry: CachedEntry) -> TimeInterval {
        facts(of: entry).lifetime
    }

    /// ``freshnessLifetime(of:)`` given the response's directives and `Date` value.
    private func freshnessLifetime(
        of entry: CachedEntry,
        directives response: CacheControl,
        date: Date
    )
        -> TimeInterval
    {
        if let maxAge = response.maxAge { return TimeInterval(maxAge.seconds) }
        if let expires = entry.header("Expires") {
            guard let expiry = Self.date(expires, of: entry) else { return 0 }
            return max(0, expiry.timeIntervalSince(date))
        }
        guard Self.heuristicallyCacheableStatusCodes.contains(entry.statusCode) || response.isPublic,
            let lastModifiedText = entry.header("Last-Modified"),
            let lastModified = Self.date(lastModifiedText, of: entry)
        else { return 0 }
        let sinceModified = max(0, date.timeIntervalSince(lastModified))
        return min(maximumHeuristicLifetime, sinceModified * heuristicFraction)
    }

    /// The current age (RFC 9111 §4.2.3), from the `Age` and `Date` fields and the request and response times. A
    /// list-based `Age` counts by its first member; an invalid one is ignored (§5.1).
    func currentAge(of entry: CachedEntry, now: Date) -> TimeInterval {
        currentAge(of: entry, now: now, facts: facts(of: entry))
    }

    /// ``currentAge(of:now:)`` with the response's fields parsed.
    func currentAge(of entry: CachedEntry, now: Date, facts: Facts) -> TimeInterval {
        let ageValue = facts.ageValue
        let dateValue = facts.date
        let apparentAge = max(0, entry.responseDate.timeIntervalSince(dateValue))
        let responseDelay = max(0, entry.responseDate.timeIntervalSince(entry.requestDate))
        let correctedAgeValue = ageValue + responseDelay
        let correctedInitialAge = max(apparentAge, correctedAgeValue)
        let residentTime = max(0, now.timeIntervalSince(entry.responseDate))
        return correctedInitialAge + residentTime
    }

    /// The `Date` field, or the response time when it is missing or invalid (§4.2.3, RFC 9110 §6.6.1).
    private func dateValue(of entry: CachedEntry) -> Date {
        entry.header("Date").flatMap { Self.date($0, of: entry) } ?? entry.responseDate
    }

    /// A date field of a stored response; a two-digit year is placed relative to when the response arrived.
    private static func date(_ text: String, of entry: CachedEntry) -> Date? {
        HTTPDate.parse(text, now: entry.responseDate)
    }

    // MARK: Using a stored response (§4)

    /// What to do with a stored response for a request with the given directives.
    ///
    /// - Fresh, and acceptable to the request's `max-age`, `min-fresh` and `no-cache`: ``Decision/fresh``. The
    ///   request's directives win over the response's, `immutable` included (§5.2.1): RFC 8246 lets a browser skip
    ///   its own reloads, but a request that says `no-cache` or `max-age=0` here is the caller's explicit wish.
    /// - A response with `no-cache` is always validated (§5.2.2.4).
    /// - Stale: served if the request's `max-stale` allows (§5.2.1.2), or within `stale-while-revalidate`,
    ///   unless `must-revalidate` (§5.2.2.2) or the request's `no-cache` forbids it (§4.2.4).
    /// - Otherwise validated when it has an `ETag` or `Last-Modified`, else fetched again.
    ///
    /// A request `max-age=0` always validates: it is how clients ask for a reload, and ages below a second are
    /// not meaningful to compare.
    func decide(_ entry: CachedEntry, request: CacheControl, now: Date) -> Decision {
        decide(entry, request: request, now: now, facts: facts(of: entry))
    }

    /// ``decide(_:request:now:)`` with the response's fields parsed.
    func decide(_ entry: CachedEntry, request: CacheControl, now: Date, facts: Facts) -> Decision {
        let response = facts.directives
        let unusable: Decision = facts.hasValidator ? .validate : .fetch
        if response.noCache { return unusable }
        let age = currentAge(of: entry, now: now, facts: facts)
        let lifetime = facts.lifetime
        let remaining = lifetime - age
        let meetsMinFresh = request.minFresh.map { remaining >= TimeInterval($0.seconds) } ?? true
        let meetsMaxAge = request.maxAge.map { $0.seconds > 0 && age <= TimeInterval($0.seconds) } ?? true
        if remaining > 0 {
            return !request.noCache && meetsMinFresh && meetsMaxAge ? .fresh : unusable
        }
        let staleness = -remaining
        if response.mustRevalidate || request.noCache || !meetsMaxAge { return unusable }
        if let maxStale = request.maxStale, staleness <= TimeInterval(maxStale.seconds) { return .staleAccepted }
        if let window = response.staleWhileRevalidate, staleness <= TimeInterval(window.seconds) {
            return .staleWhileRevalidate
        }
        return unusable
    }

    /// How long a response being stored stays useful (see ``EntryRetention``): fresh for the rest of its freshness
    /// lifetime, then stale for the longest of its `stale-while-revalidate` and `stale-if-error` windows and the
    /// offline fallback (none for `no-cache` or `must-revalidate` responses, which are never served stale).
    func retention(of entry: CachedEntry, now: Date, facts: Facts? = nil) -> EntryRetention {
        let facts = facts ?? self.facts(of: entry)
        let response = facts.directives
        let remaining = facts.lifetime - currentAge(of: entry, now: now, facts: facts)
        var window: TimeInterval = 0
        if !response.noCache && !response.mustRevalidate {
            window = max(
                TimeInterval(response.staleWhileRevalidate?.seconds ?? 0),
                TimeInterval(response.staleIfError?.seconds ?? 0),
                offlineFallback
            )
        }
        // A response already stale on arrival has used part of its stale window.
        let fresh = max(0, remaining)
        let stale = max(0, remaining < 0 ? window + remaining : window)
        return EntryRetention(freshFor: .seconds(fresh), staleFor: .seconds(stale), hasValidator: facts.hasValidator)
    }

    /// Whether a stored response may answer when the network fails or the origin answers 500, 502, 503 or 504:
    /// within the largest of the response's and the request's `stale-if-error` (RFC 5861 §4) and the offline
    /// fallback window, and never for `no-cache` or `must-revalidate` responses (RFC 9111 §4.2.4).
    func mayServeOnError(_ entry: CachedEntry, request: CacheControl, now: Date) -> Bool {
        let response = CacheControl(entry.header("Cache-Control"))
        if response.noCache || response.mustRevalidate { return false }
        let windows =
            [response.staleIfError?.seconds, request.staleIfError?.seconds].compactMap { $0 }
            .map(TimeInterval.init) + (offlineFallback > 0 ? [offlineFallback] : [])
        guard let window = windows.max() else { return false }
        let staleness = currentAge(of: entry, now: now) - freshnessLifetime(of: entry)
        return staleness <= window
    }

    /// The header fields a stored response may be sent with when it was not validated for this use: all but
    /// those its qualified `no-cache="a, b"` names (§5.2.2.4). After a successful validation all are sent.
    func headersWithoutValidation(of entry: CachedEntry, facts: Facts? = nil) -> [String: String] {
        let withheld = (facts?.directives ?? CacheControl(entry.header("Cache-Control"))).noCacheFields
        guard !withheld.isEmpty else { return entry.headers }
        return entry.headers.filter { !withheld.contains($0.key.lowercased()) }
    }

    // MARK: Validation (§4.3)

    /// Whether the response carries a validator: an `ETag` or a `Last-Modified` date.
    func hasValidator(_ entry: CachedEntry) -> Bool {
        entry.header("ETag") != nil || entry.header("Last-Modified") != nil
    }

    /// The request with `If-None-Match` and `If-Modified-Since` from the stored validators (§4.3.1). The values
    /// are sent exactly as received, as RFC 9110 §13.1.3 recommends for `Last-Modified`.
    func conditionalRequest(_ request: URLRequest, for entry: CachedEntry) -> URLRequest {
        var conditional = request
        if let etag = entry.header("ETag") { conditional.setValue(etag, forHTTPHeaderField: "If-None-Match") }
        if let lastModified = entry.header("Last-Modified") {
            conditional.setValue(lastModified, forHTTPHeaderField: "If-Modified-Since")
        }
        return conditional
    }

    /// Whether a 304 applies to the stored response that was validated, by the selection rules of §4.3.4:
    ///
    /// - If the 304 carries a strong validator (an `ETag` without `W/`, or a `Last-Modified` at least 60 s before its
    ///   `Date`, RFC 9110 §8.8.2.2), one of its strong validators must be the stored response's. A new `ETag` next to
    ///   the stored strong `Last-Modified` selects it, and the merge then stores the new `ETag`; a new `ETag` alone
    ///   selects nothing.
    /// - Otherwise one of its weak validators must correspond to the stored response's.
    /// - A 304 with no validator at all applies, since exactly one stored response was validated.
    ///
    /// `ETag`s compare weakly (RFC 9110 §8.8.3.2); `Last-Modified` values as instants, or verbatim when either is no
    /// HTTP-date.
    func notModified(_ headers: [String: String], matches entry: CachedEntry) -> Bool {
        func value(_ name: String) -> String? {
            headers.first { $0.key.equalsIgnoringASCIICase(name) }?.value
        }
        let etag = value("ETag")?.trimmingCharacters(in: .whitespaces)
        let lastModified = value("Last-Modified")
        guard etag != nil || lastModified != nil else { return true }
        let etagMatches = etag.map { tag in entry.header("ETag").map { Self.opaqueTag($0) == Self.opaqueTag(tag) } }
        let lastModifiedMatches = lastModified.map { received in
            entry.header("Last-Modified").map { Self.sameLastModified(received, $0, of: entry) }
        }
        let strongETag = etag.map { !$0.hasPrefix("W/") } ?? false
        let strongLastModified =
            lastModified.map { Self.isStrong(lastModified: $0, date: value("Date") ?? entry.header("Date"), of: entry) }
            ?? false
        if strongETag || strongLastModified {
            return (strongETag && etagMatches == true) || (strongLastModified && lastModifiedMatches == true)
        }
        return etagMatches == true || lastModifiedMatches == true
    }

    /// Whether two `Last-Modified` values name the same instant; values that are no HTTP-date only match themselves.
    private static func sameLastModified(_ received: String, _ stored: String, of entry: CachedEntry) -> Bool {
        switch (date(received, of: entry), date(stored, of: entry)) {
        case (let receivedDate?, let storedDate?): receivedDate == storedDate
        default: received.trimmingCharacters(in: .whitespaces) == stored.trimmingCharacters(in: .whitespaces)
        }
    }

    /// Whether a `Last-Modified` is a strong validator: at least 60 s before the response's `Date` (RFC 9110
    /// §8.8.2.2).
    private static func isStrong(lastModified: String, date dateText: String?, of entry: CachedEntry) -> Bool {
        guard let modified = date(lastModified, of: entry), let dateText, let sent = date(dateText, of: entry) else {
            return false
        }
        return sent.timeIntervalSince(modified) >= 60
    }

    /// The stored variant a 304 to a request validated with several variants' `ETag`s names (§4.3.1, §4.3.4): the
    /// most recent whose `ETag` matches the 304's (weak comparison); `nil` when the 304 has no `ETag` or names none.
    func variant(namedBy headers: [String: String], among variants: [CachedEntry]) -> CachedEntry? {
        guard let etag = headers.first(where: { $0.key.equalsIgnoringASCIICase("ETag") })?.value else { return nil }
        return variants.filter { $0.header("ETag").map { Self.opaqueTag($0) == Self.opaqueTag(etag) } ?? false }
            .max { $0.responseDate < $1.responseDate }
    }

    /// The stored response updated with a 304's header fields (§3.2, §4.3.4) and the new exchange's times.
    func merging(
        _ headers: [String: String],
        into entry: CachedEntry,
        requestDate: Date,
        responseDate: Date
    )
        -> CachedEntry
    {
        var merged = entry
        for (name, value) in headers {
            let lowered = name.lowercased()
            guard !Self.unstorableHeaders.contains(lowered), !Self.headersNotUpdatedBy304.contains(lowered) else {
                continue
            }
            merged.setHeader(name, value)
        }
        if headers.keys.contains(where: { $0.equalsIgnoringASCIICase("Age") }) == false {
            // The stored Age described the old exchange; the 304 starts a new one.
            merged.setHeader("Age", nil)
        }
        merged.requestDate = requestDate
        merged.responseDate = responseDate
        return merged
    }

    /// Header fields as they are stored: without hop-by-hop fields, those named by `Connection` and the field
    /// named `excluded` (the cache's status field), names compared without ASCII case.
    static func storableHeaders(_ headers: [String: String], excluding excluded: String?) -> [String: String] {
        storableFields(headers.lazy.map { ($0.key, $0.value) }, capacity: headers.count, excluding: excluded).fields
    }

    /// ``storableHeaders(_:excluding:)`` in one pass over any sequence of fields, so that a response's fields can
    /// be filtered as they are copied out of Foundation: the first `Connection` field met decides which names go;
    /// `connections` counts the `Connection` fields (names differing in case), for a caller whose order differs
    /// from the dictionary's.
    static func storableFields(
        _ fields: some Sequence<(String, String)>,
        capacity: Int,
        excluding excluded: String?
    ) -> (fields: [String: String], connections: Int) {
        var kept = [String: String](minimumCapacity: capacity)
        var connection: String?
        var connections = 0
        for (name, value) in fields {
            if name.equalsIgnoringASCIICase("Connection") {
                // Never stored itself (hop-by-hop); what it lists goes too, below.
                if connection == nil { connection = value }
                connections += 1
                continue
            }
            if let excluded, name.equalsIgnoringASCIICase(excluded) { continue }
            if isUnstorable(name) { continue }
            kept[name] = value
        }
        let named = connectionNames(connection)
        guard !named.isEmpty else { return (kept, connections) }
        // Usually `keep-alive` or `close`, naming no field that is left: removed in place, nothing copied.
        for name in kept.keys.filter({ isListed($0, in: named) }) { kept[name] = nil }
        return (kept, connections)
    }

    /// The field names a `Connection` value lists (RFC 9110 §7.6.1), lowercased; empty without one.
    static func connectionNames(_ connection: String?) -> [String] {
        guard let connection, !connection.isEmpty else { return [] }
        // What nearly every response says, named without splitting, trimming and lowercasing.
        if connection.equalsIgnoringASCIICase("keep-alive") { return ["keep-alive"] }
        if connection.equalsIgnoringASCIICase("close") { return ["close"] }
        return Array(Set(connection.split(separator: ",").map { $0.trimmingWhitespace().lowercased() }))
    }

    /// Whether `unstorableHeaders` holds `name` lowercased: an ASCII name (every real one) is compared without
    /// ASCII case against the list (mostly a comparison of lengths), without lowercasing it (an allocation for a
    /// name of more than 15 bytes) or hashing it; any other is lowercased, which may change its length.
    static func isUnstorable(_ name: String) -> Bool {
        guard isASCII(name) else { return unstorableHeaders.contains(name.lowercased()) }
        return unstorableHeaderList.contains { name.equalsIgnoringASCIICase($0) }
    }

    /// ``unstorableHeaders`` as a list, for ``isUnstorable(_:)``.
    private static let unstorableHeaderList = Array(unstorableHeaders)

    /// Whether `names` (lowercased, as ``connectionNames(_:)`` gives them) holds `name` lowercased, compared
    /// like ``isUnstorable(_:)``.
    static func isListed(_ name: String, in names: [String]) -> Bool {
        guard !names.isEmpty else { return false }
        guard isASCII(name) else { return names.contains(name.lowercased()) }
        // An ASCII name lowercases to itself with its ASCII letters folded: equal to a lowercased name exactly when
        // the two are equal without ASCII case (a name with other bytes differs from it both ways).
        return names.contains { name.equalsIgnoringASCIICase($0) }
    }

    private static func isASCII(_ text: String) -> Bool {
        text.utf8.allSatisfy { $0 < 0x80 }
    }

    /// An entity tag without its weakness prefix, for the weak comparison of RFC 9110 §8.8.3.2.
    private static func opaqueTag(_ tag: String) -> String {
        let trimmed = tag.trimmingCharacters(in: .whitespaces)
        return trimmed.hasPrefix("W/") ? String(trimmed.dropFirst(2)) : trimmed
    }
}
