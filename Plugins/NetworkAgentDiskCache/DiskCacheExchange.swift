import Foundation
import NetworkAgent

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One cacheable request going through a ``DiskCachePlugin``: sending it, validating a stored response, storing
/// the answer and building the responses the caller sees.
///
/// A streamed call (``/NetworkAgent/NetworkAgentExchange/isStreaming``) is answered from the store like any other,
/// but nothing it fetches is stored: `next` returns a 2xx body empty (its bytes go to the caller) and other
/// statuses with at most their first MiB. What it fetched still replaces the stored variant. A background refresh
/// is always sent buffered (see ``send(_:)``), so it stores whole bodies whatever kind of call started it.
///
/// A class, not a struct: an exchange is handed to several functions and tasks per request (the lookup, the
/// collapsed miss, the save), and each copy of a struct of eight fields retained and released every one of them.
final class DiskCacheExchange: Sendable {
    let plugin: DiskCachePlugin
    let request: URLRequest
    /// The endpoint of the call, whose response limit a background refresh keeps.
    let endpoint: any NetworkAgentEndpoint
    let method: String
    let directives: CacheControl
    let next: NetworkAgentExchange
    /// Whether this is a `stale-while-revalidate` refresh, running after the caller got its answer.
    let isBackground: Bool
    /// The key the plugin looked the request up under (no varying headers), when it did: the key a response from
    /// the request's own URL without `Vary` is filed under, so that storing or removing it needs no second key.
    let lookupKey: CacheKey?

    init(
        plugin: DiskCachePlugin,
        request: URLRequest,
        endpoint: any NetworkAgentEndpoint,
        method: String,
        directives: CacheControl,
        next: NetworkAgentExchange,
        isBackground: Bool = false,
        lookupKey: CacheKey? = nil
    ) {
        self.plugin = plugin
        self.request = request
        self.endpoint = endpoint
        self.method = method
        self.directives = directives
        self.next = next
        self.isBackground = isBackground
        self.lookupKey = lookupKey
    }

    private var policy: CachePolicy { plugin.policy }
    private var state: DiskCacheState { plugin.state }
    private func now() -> Date { plugin.configuration.now() }
    /// Whether the bodies `send` returns are the caller's stream rather than the response's bytes.
    private var bodiesAreStreamed: Bool { !isBackground && next.isStreaming }

    /// Sends a request down the chain; a background refresh goes to the agent directly, buffered, within the
    /// endpoint's response limit (``/NetworkAgent/NetworkAgentEndpoint/maximumResponseBytes``) like the call itself.
    ///
    /// The refresh outlives the caller's call: that call may be a stream, whose `next` would open a second stream
    /// in its place, and its record of the request sent must not change after the caller was answered. So the
    /// refresh is a side request, which skips the plugins registered after the cache (there should be none: the
    /// cache goes last).
    ///
    /// - Parameter field: The status field the answer will carry unless it is replaced (a plain miss,
    ///   ``statusField(_:)``): the transport is asked to build its response with it already on it, saving a second
    ///   `HTTPURLResponse` per miss (see `AddedResponseField`).
    private func send(
        _ request: URLRequest,
        asking field: AddedResponseField? = nil
    ) async throws -> (data: Data, response: URLResponse) {
        if isBackground { return try await next.agent.send(request, for: endpoint) }
        guard let field else { return try await next(request) }
        return try await next(request, addingResponseField: field)
    }

    /// The status field to ask the transport for (`nil` without a status header, and for a background refresh).
    private func statusField(_ status: CacheStatus) -> AddedResponseField? {
        guard !isBackground, let header = plugin.configuration.statusHeader else { return nil }
        return AddedResponseField(name: header, value: status.rawValue)
    }

    /// Whether `response` is the one the transport built with `field` on it, under exactly its name (an `X-` name
    /// keeps its spelling in Foundation), as ``annotate(_:headers:status:)`` would hand it on.
    private static func carries(_ field: AddedResponseField?, _ response: HTTPURLResponse) -> Bool {
        guard let field, field.name.hasPrefix("x-") || field.name.hasPrefix("X-") else { return false }
        return field.receipt.contains(response) && response.isRebuildable
    }

    // MARK: Network

    /// Sends the request as is and stores a storable answer. With a `fallback`, a network failure or a 5xx may be
    /// answered with it under `stale-if-error`.
    func fetch(fallback: CachedEntry?) async throws -> (data: Data, response: URLResponse) {
        let requestDate = now()
        let data: Data
        let response: URLResponse
        let field = statusField(.miss)
        do {
            (data, response) = try await send(request, asking: field)
        } catch {
            if let fallback, let answer = staleAnswerOnError(fallback, error: error) { return answer }
            throw error
        }
        let responseDate = now()
        guard let http = response as? HTTPURLResponse else { return (data, response) }
        if let fallback, let answer = staleAnswerOnServerError(fallback, status: http.statusCode) { return answer }
        if Self.carries(field, http) {
            // The transport's own response with the status on it: its fields are copied out of Foundation only
            // if it may be stored.
            await save(data: data, response: http, headers: nil, requestDate: requestDate, responseDate: responseDate)
            return (data, http)
        }
        // The response's fields are copied out of Foundation once, for the storing decision and the annotation.
        let headers = Self.headerFields(of: http)
        await save(data: data, response: http, headers: headers, requestDate: requestDate, responseDate: responseDate)
        return (data, annotate(http, headers: headers, status: .miss))
    }

    /// Sends a conditional request for a stored response; merges a matching 304 into it (RFC 9111 §4.3.3, §4.3.4),
    /// stores a full answer instead, or falls back to the stored response on errors where allowed.
    func validate(_ stored: CachedEntry) async throws -> (data: Data, response: URLResponse) {
        let requestDate = now()
        let data: Data
        let response: URLResponse
        do {
            (data, response) = try await send(policy.conditionalRequest(request, for: stored))
        } catch {
            if let answer = staleAnswerOnError(stored, error: error) { return answer }
            throw error
        }
        let responseDate = now()
        guard let http = response as? HTTPURLResponse else { return (data, response) }
        if http.statusCode == 304 {
            let headers = Self.headerFields(of: http)
            let redirected = isRedirected(http)
            guard !redirected, policy.notModified(headers, matches: stored) else {
                // The 304 is about another representation (§4.3.4, last paragraph), or about the resource this URL
                // now redirects to: ask again without conditions.
                state.record("miss", ["method": method, "reason": redirected ? "redirected" : "validator_mismatch"])
                return try await fetch(fallback: stored)
            }
            let merged = policy.merging(headers, into: stored, requestDate: requestDate, responseDate: responseDate)
            state.record("revalidated", ["method": method])
            if policy.mayStore(method: method, request: directives, entry: merged) {
                await write(merged)
            } else {
                await plugin.store.remove(stored.key)
            }
            if let answer = answer(with: merged, status: .revalidated, now: responseDate) { return answer }
            return (data, annotate(http, status: .miss))
        }
        if let answer = staleAnswerOnServerError(stored, status: http.statusCode) { return answer }
        state.record("miss", ["method": method, "reason": "modified"])
        let headers = Self.headerFields(of: http)
        await save(data: data, response: http, headers: headers, requestDate: requestDate, responseDate: responseDate)
        return (data, annotate(http, headers: headers, status: .miss))
    }

    /// Sends a request that no stored variant matches with the `ETag`s of the stored variants (RFC 9111 §4.3.1). A
    /// 304 naming one of them answers with that variant's body and the 304's fields, stored under this request's
    /// key as well (§4.3.4); a 304 naming none is followed by the request without conditions; a full response is
    /// stored like any miss.
    func validateVariants(_ variants: [CachedEntry]) async throws -> (data: Data, response: URLResponse) {
        var conditional = request
        let tags = variants.compactMap { $0.header("ETag")?.trimmingCharacters(in: .whitespaces) }
        conditional.setValue(Array(Set(tags)).sorted().joined(separator: ", "), forHTTPHeaderField: "If-None-Match")
        let requestDate = now()
        let (data, response) = try await send(conditional)
        let responseDate = now()
        guard let http = response as? HTTPURLResponse else { return (data, response) }
        guard http.statusCode == 304 else {
            state.record("miss", ["method": method, "reason": "vary_mismatch"])
            let headers = Self.headerFields(of: http)
            await save(
                data: data,
                response: http,
                headers: headers,
                requestDate: requestDate,
                responseDate: responseDate
            )
            return (data, annotate(http, headers: headers, status: .miss))
        }
        let headers = Self.headerFields(of: http)
        guard !isRedirected(http), let chosen = policy.variant(namedBy: headers, among: variants),
            let key = CacheKey(request: request, varyNames: chosen.key.varyNames)
        else {
            state.record("miss", ["method": method, "reason": "vary_mismatch"])
            return try await fetch(fallback: nil)
        }
        var reused = chosen
        reused.key = key
        let merged = policy.merging(headers, into: reused, requestDate: requestDate, responseDate: responseDate)
        state.record("revalidated", ["method": method, "variant": "true"])
        if policy.mayStore(method: method, request: directives, entry: merged) { await write(merged) }
        if let answer = answer(with: merged, status: .revalidated, now: responseDate) { return answer }
        return (data, annotate(http, status: .miss))
    }

    /// Revalidates a stored response in an unstructured task, unless a refresh of the same entry is running
    /// (RFC 5861 §3: at most one background refresh per entry). The task inherits the caller's event observers.
    /// On a shared store, the refresh runs only in the process that wins the store's revalidation claim
    /// (``ResponseStore/claimRevalidation(of:)``).
    func refreshInBackground(_ stored: CachedEntry) {
        let id = stored.key.identifier
        guard state.beginRefresh(id) else { return }
        // The caller already has its answer: the refresh carries no request directives of its own, and is sent
        // buffered outside the caller's call.
        let refresh = DiskCacheExchange(
            plugin: plugin,
            request: request,
            endpoint: endpoint,
            method: method,
            directives: CacheControl(),
            next: next,
            isBackground: true
        )
        // The refresh outlives the request that started it: its store calls are not bound by that request's deadline.
        Task {
            await StoreDeadline.$current.withValue(nil) {
                defer { refresh.state.endRefresh(id) }
                guard let claimed = await refresh.claimRevalidation(of: stored) else { return }
                do {
                    _ = try await refresh.validate(claimed)
                } catch {
                    refresh.state.record("error", ["reason": "refresh_failed", "method": refresh.method])
                }
                await refresh.releaseRevalidation(of: stored)
            }
        }
    }

    // MARK: Storing

    /// Stores a response if RFC 9111 §3 allows and it is worth it; otherwise removes the stored variant it replaces.
    ///
    /// The response is filed under the URL it came from. When the transport followed redirects, that is not the
    /// request's URL: the cache saw only the final response, not the redirects, so nothing is stored under the
    /// first URL, and what was stored there goes (its latest answer was a redirect the cache could not store).
    ///
    /// - Parameter headers: The response's fields when the caller copied them (``headerFields(of:)``); `nil` has
    ///   them copied only for a response that may be stored. `Vary` and `Cache-Control` are the same either way:
    ///   Foundation files them under exactly these names.
    private func save(
        data: Data,
        response: HTTPURLResponse,
        headers: [String: String]?,
        requestDate: Date,
        responseDate: Date
    ) async {
        func field(_ name: String) -> String? {
            headers.map { Self.field(name, in: $0) } ?? response.headerField(name)
        }
        let varyNames = CacheKey.varyNames(fromField: field("Vary"))
        let redirected = isRedirected(response)
        // The origin's latest (non-error) word on this resource replaces what is stored, whether or not it can be
        // stored itself. A server error leaves the stored response alone, for stale-if-error.
        let replaces = !directives.noStore && response.statusCode < 500
        // Decide first: a response that may never be stored (`no-store` in the request or the response, a body
        // streamed to the caller) leaves before any entry is built or parsed; its key (usually the lookup's) only
        // removes what it replaces.
        if bodiesAreStreamed || directives.noStore || Self.forbidsStoring(cacheControl: field("Cache-Control")) {
            guard replaces, let filed = storageKey(for: response, redirected: redirected, varyNames: varyNames)
            else { return }
            if redirected { await removeAllVariants(of: request) }
            await plugin.store.remove(filed.key)
            return
        }
        let excluded = plugin.configuration.statusHeader
        let stored =
            headers.map { CachePolicy.storableHeaders($0, excluding: excluded) }
            ?? Self.storableHeaderFields(of: response, excluding: excluded)
        guard let (key, url) = storageKey(for: response, redirected: redirected, varyNames: varyNames) else { return }
        if redirected && replaces { await removeAllVariants(of: request) }
        let entry = CachedEntry(
            key: key,
            responseURL: url,
            statusCode: response.statusCode,
            headers: stored,
            body: method == "HEAD" ? Data() : data,
            requestDate: requestDate,
            responseDate: responseDate
        )
        // The entry's fields are parsed once for the three questions below.
        let facts = policy.facts(of: entry)
        guard !bodiesAreStreamed, !redirected || mayStoreRedirected(response, varyNames: varyNames),
            policy.mayStore(method: method, request: directives, entry: entry, facts: facts),
            policy.isWorthStoring(entry, facts: facts),
            entry.body.count <= plugin.configuration.maximumEntryBytes
        else {
            if replaces { await plugin.store.remove(key) }
            return
        }
        // Variants filed under other Vary names come from an earlier configuration of the origin (§4.1).
        for variant in await plugin.store.variantKeys(forPrimaryKey: key.primary)
        where variant.varyNames != key.varyNames {
            await plugin.store.remove(variant)
        }
        await write(entry, facts: facts)
    }

    /// Whether a response says it must not be stored (RFC 9111 §5.2.2.5): `no-store`, unless `must-understand`
    /// leaves the decision to ``CachePolicy/mayStore(method:request:entry:facts:)``.
    private static func forbidsStoring(cacheControl field: String?) -> Bool {
        guard let field else { return false }
        let directives = CacheControl(field)
        return directives.noStore && !directives.mustUnderstand
    }

    /// The key a response is filed under and the URL it answered, or `nil` when it cannot be filed: the lookup's
    /// key for a response from the request's own URL without `Vary`, otherwise a key worked out for the URL that
    /// answered and the names it varies on.
    private func storageKey(
        for response: HTTPURLResponse,
        redirected: Bool,
        varyNames: [String]
    ) -> (key: CacheKey, url: URL)? {
        if !redirected, varyNames.isEmpty, let lookupKey, let url = request.url { return (lookupKey, url) }
        let answered = answeredRequest(response, redirected: redirected)
        guard let key = CacheKey(request: answered, varyNames: varyNames), let url = answered.url else { return nil }
        return (key, url)
    }

    // MARK: Redirects

    /// Whether the transport followed redirects to get this response: its URL is not the request's.
    private func isRedirected(_ response: HTTPURLResponse) -> Bool {
        guard let responseURL = response.url, let requestURL = request.url else { return false }
        // The same text normalises the same: only different URLs need the normalisation.
        guard responseURL.absoluteString != requestURL.absoluteString else { return false }
        return CacheKey.normalizedURL(responseURL) != CacheKey.normalizedURL(requestURL)
    }

    /// The request as the response's URL answered it: the caller's request, sent to the response's URL.
    private func answeredRequest(_ response: HTTPURLResponse, redirected: Bool) -> URLRequest {
        guard redirected, let url = response.url else { return request }
        var answered = request
        answered.url = url
        return answered
    }

    /// Whether the final response of a redirect chain may be filed under its URL with this request's header values.
    ///
    /// The key takes the credential fingerprint and the varying header values from the caller's request. After a
    /// hop to another origin the transport removed the credential headers, so a response that varies on one of
    /// them was chosen for values the key does not hold: it is not stored. (Filing it under the caller's
    /// credentials otherwise only narrows who it answers.)
    private func mayStoreRedirected(_ response: HTTPURLResponse, varyNames: [String]) -> Bool {
        guard let requestURL = request.url, let responseURL = response.url,
            Origin(requestURL) != Origin(responseURL)
        else { return true }
        let credentialNames = Set(CacheKey.credentialNames(of: request))
        return !varyNames.contains { credentialNames.contains($0) }
    }

    /// Removes every stored variant of the request's URL for this user.
    private func removeAllVariants(of request: URLRequest) async {
        guard let key = CacheKey(request: request) else { return }
        for variant in await plugin.store.variantKeys(forPrimaryKey: key.primary) { await plugin.store.remove(variant) }
    }

    private func write(_ entry: CachedEntry, facts: CachePolicy.Facts? = nil) async {
        do {
            let retention = policy.retention(of: entry, now: now(), facts: facts)
            let evicted = try await plugin.store.store(entry, retention: retention)
            state.record("stored", ["method": method, "status": "\(entry.statusCode)", "bytes": "\(entry.body.count)"])
            if evicted.entryCount > 0 {
                state.record(
                    "evicted",
                    ["count": "\(evicted.entryCount)", "bytes": "\(evicted.totalBytes)"],
                    count: evicted.entryCount
                )
            }
        } catch {
            plugin.recordError(error, phase: "write")
        }
    }

    // MARK: Answers

    /// A stored response as the caller sees it: its status, header fields and body, an `Age` (RFC 9111 §5.1) and
    /// the status header; `nil` if Foundation refuses to build the response. Unless it was just revalidated, the
    /// fields a qualified `no-cache` names are left out (§5.2.2.4). `facts` are the entry's parsed fields, when the
    /// caller has them (``CachePolicy/facts(of:)``).
    func answer(
        with entry: CachedEntry,
        status: CacheStatus,
        now: Date,
        facts: CachePolicy.Facts? = nil
    ) -> (data: Data, response: URLResponse)? {
        let facts = facts ?? policy.facts(of: entry)
        var headers = status == .revalidated ? entry.headers : policy.headersWithoutValidation(of: entry, facts: facts)
        let age = max(0, policy.currentAge(of: entry, now: now, facts: facts))
        for name in headers.keys where name.equalsIgnoringASCIICase("Age") { headers[name] = nil }
        headers["Age"] = String(Int(min(age, TimeInterval(CacheControl.maximumDeltaSeconds))))
        if let header = plugin.configuration.statusHeader { headers[header] = status.rawValue }
        // Equal inputs give an equal (immutable) response: one built for an earlier answer is reused (HitMemo).
        let inputs = HitMemo.Inputs(url: entry.responseURL, statusCode: entry.statusCode, headers: headers)
        guard let response = state.hitMemo.response(for: inputs) else { return nil }
        return (method == "HEAD" ? Data() : entry.body, response)
    }

    /// The 504 an `only-if-cached` request gets when nothing stored may answer it (RFC 9111 §5.2.1.7).
    ///
    /// - Parameter reason: Why nothing stored could answer, for the event's `detail`.
    func onlyIfCachedFailure(reason: String) -> (data: Data, response: URLResponse) {
        state.record("miss", ["method": method, "reason": "only_if_cached", "detail": reason])
        var headers = ["Content-Length": "0"]
        if let header = plugin.configuration.statusHeader { headers[header] = CacheStatus.miss.rawValue }
        let url = request.url ?? URL(fileURLWithPath: "/")
        let response =
            HTTPURLResponse(url: url, statusCode: 504, httpVersion: "HTTP/1.1", headerFields: headers)
            ?? URLResponse(url: url, mimeType: nil, expectedContentLength: 0, textEncodingName: nil)
        return (Data(), response)
    }

    /// A network response with the status header added, keeping the transport's `transferTimings`.
    ///
    /// A response that has the field with this value already (the transport set it, asked by ``send(_:asking:)``)
    /// is returned as it is: rebuilding it from the same URL, status, fields and timings would give the same
    /// response (Foundation keeps no HTTP version). Any other is rebuilt, as from URLSessionTransport, a custom
    /// transport, or an inner plugin that made a response of its own.
    ///
    /// - Parameter headers: The response's fields, when the caller has them (``headerFields(of:)``).
    private func annotate(
        _ response: HTTPURLResponse,
        headers: [String: String]? = nil,
        status: CacheStatus
    ) -> URLResponse {
        guard let header = plugin.configuration.statusHeader, let url = response.url else { return response }
        var headers = headers ?? Self.headerFields(of: response)
        if headers[header] == status.rawValue, response.isRebuildable { return response }
        headers[header] = status.rawValue
        return HTTPURLResponse.withTransferTimings(
            response.transferTimings,
            url: url,
            statusCode: response.statusCode,
            httpVersion: "HTTP/1.1",
            headerFields: headers
        )
            ?? response
    }

    private func staleAnswerOnError(_ stored: CachedEntry, error: any Error) -> (data: Data, response: URLResponse)? {
        guard let failure = error as? NetworkAgentError,
            failure.code == .transport || failure.code == .timedOut || failure.code == .circuitOpen
        else {
            return nil
        }
        return staleAnswer(stored, reason: "stale_if_error", detail: failure.code.description)
    }

    private func staleAnswerOnServerError(_ stored: CachedEntry, status: Int) -> (data: Data, response: URLResponse)? {
        guard CachePolicy.staleIfErrorStatusCodes.contains(status) else { return nil }
        return staleAnswer(stored, reason: "stale_if_error", detail: "\(status)")
    }

    private func staleAnswer(
        _ stored: CachedEntry,
        reason: String,
        detail: String
    )
        -> (data: Data, response: URLResponse)?
    {
        let now = now()
        guard policy.mayServeOnError(stored, request: directives, now: now),
            let answer = answer(with: stored, status: .stale, now: now)
        else { return nil }
        state.record("stale", ["method": method, "reason": reason, "error": detail])
        return answer
    }

    /// The value of a header field of `headers`, its name compared without ASCII case, as
    /// `HTTPURLResponse.value(forHTTPHeaderField:)` finds it (without its case-folding of every name per call).
    static func field(_ name: String, in headers: [String: String]) -> String? {
        if let exact = headers[name] { return exact }
        return headers.first { $0.key.equalsIgnoringASCIICase(name) }?.value
    }

    /// A response's header fields as strings.
    static func headerFields(of response: HTTPURLResponse) -> [String: String] {
        let all = response.allHeaderFields
        var fields = [String: String](minimumCapacity: all.count)
        for (name, value) in all {
            guard let name = string(name) else { continue }
            fields[name] = value as? String ?? "\(value)"
        }
        return fields
    }

    /// A field name of `allHeaderFields` as a string: its `base` cast from `Any`, which costs about half of
    /// `AnyHashable`'s own conditional cast (a ten-field head: about 0.6 µs against 1.2 µs for names and values),
    /// with that cast as the fallback for a base that is no `String`.
    fileprivate static func string(_ name: AnyHashable) -> String? {
        name.base as? String ?? name as? String
    }

    /// `CachePolicy.storableHeaders(headerFields(of: response), excluding: excluded)`, copied out of Foundation in
    /// one pass: the fields a stored response keeps go straight into the one dictionary, without a second one for
    /// all of them first. A response with more than one `Connection` field (names differing in case; it takes a
    /// response built by hand) goes the two-step way, whose first one in the copy's order decides.
    static func storableHeaderFields(of response: HTTPURLResponse, excluding excluded: String?) -> [String: String] {
        let all = response.allHeaderFields
        let (stored, connections) = CachePolicy.storableFields(
            StringFields(all.makeIterator()),
            capacity: all.count,
            excluding: excluded
        )
        guard connections <= 1 else {
            return CachePolicy.storableHeaders(headerFields(of: response), excluding: excluded)
        }
        return stored
    }
}

/// `allHeaderFields` as names and values that are strings, as ``DiskCacheExchange/headerFields(of:)`` copies them:
/// a sequence of its own rather than a lazy `compactMap`, whose closure was two allocations per call.
private struct StringFields: Sequence, IteratorProtocol {
    var fields: [AnyHashable: Any].Iterator

    init(_ fields: [AnyHashable: Any].Iterator) {
        self.fields = fields
    }

    mutating func next() -> (String, String)? {
        while let (name, value) = fields.next() {
            guard let name = DiskCacheExchange.string(name) else { continue }
            return (name, value as? String ?? "\(value)")
        }
        return nil
    }
}
