import Foundation
import NetworkAgent

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `Range` requests answered from the store (RFC 9110 §14.2; RFC 9111 §3.4 lets a cache serve what it holds): a
/// `GET` for a single byte range, with none of the caller's own conditionals, is answered from a stored complete 200
/// that may be used without the network — 206 with the selected bytes and their `Content-Range`, or 416 with
/// `Content-Range: bytes */length` when the range misses the body. Everything else about a range request goes to the
/// origin exactly as the caller made it, and nothing the origin answers to it is stored: several ranges, other
/// units, invalid fields, nothing stored, a stored response that needs validation first, or one whose body is not
/// the representation as sent (a content coding, a length that differs).
extension DiskCachePlugin {
    /// The byte range of a `GET` the cache may answer from the store: a single byte range, without `If-Range` or
    /// another conditional of the caller's own.
    static func servableRange(_ fields: RequestFields) -> ByteRange? {
        guard let field = fields.value("Range"),
            !fields.containsAny(of: bypassHeaders.filter { $0 != "Range" })
        else { return nil }
        return ByteRange(rangeField: field)
    }

    /// Answers a range request from a stored response that may be used as is, or else sends it untouched (an
    /// `only-if-cached` request gets its 504 instead).
    func answerRange(
        _ range: ByteRange,
        of request: URLRequest,
        endpoint: any NetworkAgentEndpoint,
        next: NetworkAgentExchange
    ) async throws -> (data: Data, response: URLResponse) {
        // The stored response is looked up, and refreshed in the background, as the request for the whole resource.
        var whole = request
        whole.setValue(nil, forHTTPHeaderField: "Range")
        let directives = CacheControl(
            requestCacheControl: request.headerField("Cache-Control"),
            pragma: request.headerField("Pragma")
        )
        guard let key = CacheKey(request: whole) else { return try await next(request) }
        let exchange = DiskCacheExchange(
            plugin: self,
            request: whole,
            endpoint: endpoint,
            method: "GET",
            directives: directives,
            next: next
        )
        let (stored, reason) = await lookup(key, request: whole)
        let now = configuration.now()
        if let stored, stored.holdsCompleteRepresentation {
            let decision = policy.decide(stored, request: directives, now: now)
            let status: CacheStatus? =
                switch decision {
                case .fresh: .hit
                case .staleAccepted, .staleWhileRevalidate: .stale
                case .validate, .fetch: nil
                }
            if let status, let answer = exchange.answer(with: stored, status: status, now: now),
                let partial = Self.rangeAnswer(answer, range: range)
            {
                var attributes = ["method": "GET", "range": "true"]
                if decision == .staleAccepted { attributes["reason"] = "max_stale" }
                if decision == .staleWhileRevalidate { attributes["reason"] = "stale_while_revalidate" }
                state.record(status == .hit ? "hit" : "stale", attributes)
                if decision == .staleWhileRevalidate { exchange.refreshInBackground(stored) }
                return partial
            }
        }
        if directives.onlyIfCached {
            return exchange.onlyIfCachedFailure(reason: stored == nil ? reason : "range_not_servable")
        }
        return try await next(request)
    }

    /// The answer built from a stored 200, cut to a range: a 206 with the selected bytes, `Content-Range` and their
    /// `Content-Length` (RFC 9110 §15.3.7), a 416 with `Content-Range: bytes */length` (§15.5.17), or the answer as is
    /// when its body is empty and the range a suffix (§14.2 lets a recipient ignore `Range`). `nil` if Foundation
    /// refuses to build the response.
    private static func rangeAnswer(
        _ answer: (data: Data, response: URLResponse),
        range: ByteRange
    ) -> (data: Data, response: URLResponse)? {
        guard let http = answer.response as? HTTPURLResponse, let url = http.url else { return nil }
        var headers = DiskCacheExchange.headerFields(of: http)
        let length = answer.data.count
        let status: Int
        let body: Data
        switch range.resolved(length: length) {
        case .whole:
            return answer
        case .bytes(let bytes):
            status = 206
            body = answer.data.subdata(
                in: (answer.data.startIndex + bytes.lowerBound)..<(answer.data.startIndex + bytes.upperBound + 1)
            )
            set("Content-Range", "bytes \(bytes.lowerBound)-\(bytes.upperBound)/\(length)", in: &headers)
        case .unsatisfiable:
            status = 416
            body = Data()
            // The stored representation's own fields describe a body this answer does not carry.
            for name in ["Content-Type", "Content-Encoding", "Content-Language", "Content-Location"] {
                set(name, nil, in: &headers)
            }
            set("Content-Range", "bytes */\(length)", in: &headers)
        }
        set("Content-Length", "\(body.count)", in: &headers)
        guard
            let response = HTTPURLResponse(url: url, statusCode: status, httpVersion: "HTTP/1.1", headerFields: headers)
        else { return nil }
        return (body, response)
    }

    /// Sets or, with `nil`, removes a field, whatever the case of the name already there.
    private static func set(_ name: String, _ value: String?, in headers: inout [String: String]) {
        for existing in headers.keys where existing.equalsIgnoringASCIICase(name) { headers[existing] = nil }
        if let value { headers[name] = value }
    }
}
