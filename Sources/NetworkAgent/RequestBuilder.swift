import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Turns an endpoint into the `URLRequest` the plugin chain starts from.
struct RequestBuilder {
    let configuration: NetworkAgentConfiguration

    /// The `Content-Type` of the endpoint protocol's default headers.
    static let defaultContentType = "application/json"

    func makeRequest(for endpoint: any NetworkAgentEndpoint) throws(NetworkAgentError) -> URLRequest {
        let method = endpoint.method
        var request = URLRequest(url: try Self.url(base: endpoint.baseURL, path: endpoint.path))
        // A new request's method is GET already; setting it normalises the name through Foundation again.
        if method != .get { request.httpMethod = method.name }
        request.timeoutInterval = (endpoint.timeout ?? configuration.timeout).timeInterval
        // The endpoint's fields and the User-Agent go into the request in one write: each `setHeaderField` copies
        // and rewrites the whole field dictionary. The dictionary gets room for all of them at once: grown field by
        // field, it was made twice for a request with one field of its own.
        let headers = endpoint.headers
        var fields: [String: String] = [:]
        fields.reserveCapacity(headers.count + 1)
        var hasUserAgent = false
        for (name, value) in headers {
            try HTTPHeaderValidator.validate(name: name, value: value)
            HTTPFieldName.set(value, for: name, in: &fields)
            // A valid name is a token (ASCII): compared on its bytes, and only at the length of `User-Agent`.
            if !hasUserAgent, name.utf8.count == 10, HTTPFieldName.equal(name, "User-Agent") { hasUserAgent = true }
        }
        if !hasUserAgent {
            // No field is named `User-Agent` in any case, so `HTTPFieldName.set` would remove nothing and file it
            // under this spelling (its own canonical one): inserted without that function's two look-ups, and
            // without asking the fields for it first (a hashed look-up and a pass over every name).
            fields["User-Agent"] = configuration.userAgent
        }
        request.allHTTPHeaderFields = fields
        markSensitiveHeaders(on: &request)

        switch endpoint.task {
        case .requestPlain:
            break
        case .requestAttributes(let attributes, .url):
            request.url = try Self.url(request.url, appendingQuery: URLEncodedForm.encode(attributes))
        case .requestAttributes(let attributes, .json):
            guard JSONSerialization.isValidJSONObject(attributes as [String: Any]) else {
                throw NetworkAgentError(.encoding, "the attributes cannot be encoded as JSON (\(endpoint.path))")
            }
            do {
                try setBody(JSONSerialization.data(withJSONObject: attributes, options: [.sortedKeys]), on: &request)
            } catch let error as NetworkAgentError {
                throw error
            } catch {
                throw NetworkAgentError(.encoding, "the attributes cannot be encoded as JSON", underlying: error)
            }
        case .requestAttributes(let attributes, .form):
            try setBody(Data(URLEncodedForm.encode(attributes).utf8), on: &request)
            // A form body is never JSON: the protocol's default `Content-Type: application/json` gives way.
            let declared = request.value(forHTTPHeaderField: "Content-Type")
            if declared == nil || declared == Self.defaultContentType {
                request.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
            }
        case .requestWithoutAttributes(let content):
            try encodeContent(content, into: &request)
        case .upload(let parts):
            try encodeMultipart(parts, into: &request)
        }
        return request
    }

    /// Sets the agent-wide defaults a request lacks (the `User-Agent`) and marks the configuration's sensitive
    /// headers.
    func applyDefaults(to request: inout URLRequest) {
        setDefault(configuration.userAgent, for: "User-Agent", on: &request)
        markSensitiveHeaders(on: &request)
    }

    private func markSensitiveHeaders(on request: inout URLRequest) {
        if !configuration.sensitiveHeaders.isEmpty {
            request.sensitiveHeaderNames.formUnion(configuration.sensitiveHeaders)
        }
    }

    private func setDefault(_ value: String, for name: String, on request: inout URLRequest) {
        if request.headerField(name) == nil {
            request.setHeaderField(value, for: name)
        }
    }

    private func setBody(_ body: Data, on request: inout URLRequest) throws(NetworkAgentError) {
        try Self.checkBodyAllowed(request)
        request.httpBody = body
    }

    /// FoundationNetworking refuses a `GET` with a body (-1103); refuse it earlier with a clear error.
    private static func checkBodyAllowed(_ request: URLRequest) throws(NetworkAgentError) {
        if request.httpMethod == HTTPMethod.get.name || request.httpMethod == HTTPMethod.head.name {
            throw NetworkAgentError(.encoding, "a \(request.httpMethod ?? "") request cannot carry a body")
        }
    }

    private func encodeContent(_ content: any Sendable, into request: inout URLRequest) throws(NetworkAgentError) {
        switch content {
        case let data as Data:
            try setBody(data, on: &request)
            setDefault("application/octet-stream", for: "Content-Type", on: &request)
        case let text as String:
            try setBody(Data(text.utf8), on: &request)
            setDefault("text/plain; charset=utf-8", for: "Content-Type", on: &request)
        case let value as any Encodable:
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            let body: Data
            do { body = try encoder.encode(value) } catch {
                throw NetworkAgentError(.encoding, "the content cannot be encoded as JSON", underlying: error)
            }
            try setBody(body, on: &request)
            setDefault("application/json", for: "Content-Type", on: &request)
        default:
            throw NetworkAgentError(
                .encoding,
                "requestWithoutAttributes needs Encodable, Data or String content, not \(type(of: content))"
            )
        }
    }

    private func encodeMultipart(
        _ parts: [HTTPMultipartTask],
        into request: inout URLRequest
    )
        throws(NetworkAgentError)
    {
        try Self.checkBodyAllowed(request)
        let boundary = "Boundary-\(UUID().uuidString)"
        let declared = request.value(forHTTPHeaderField: "Content-Type") ?? ""
        let mediaType =
            declared.lowercased().hasPrefix("multipart/")
            ? Self.removingBoundary(from: declared) : "multipart/form-data"
        request.setValue("\(mediaType); boundary=\(boundary)", forHTTPHeaderField: "Content-Type")
        let encoder = MultipartEncoder(
            boundary: boundary,
            memoryThreshold: configuration.multipartMemoryThreshold,
            temporaryDirectory: configuration.temporaryDirectory
        )
        switch try encoder.encode(parts) {
        case .data(let data): request.httpBody = data
        case .file(let stream): request.httpBodyStream = stream
        }
    }

    /// A declared multipart `Content-Type` without its `boundary` parameters: the encoder appends the one the body
    /// uses, and a second one would leave the receiver to guess (RFC 2046 §5.1.1). When a quoted string is left open,
    /// only the media type is kept, since a parameter appended after it would end up inside the quotes.
    static func removingBoundary(from contentType: String) -> String {
        let utf8 = contentType.utf8
        var parameters: [Substring] = []
        var start = utf8.startIndex
        var inQuotes = false
        var escaped = false
        for index in utf8.indices {
            let byte = utf8[index]
            if escaped {
                escaped = false
            } else if inQuotes, byte == UInt8(ascii: "\\") {
                escaped = true
            } else if byte == UInt8(ascii: "\"") {
                inQuotes.toggle()
            } else if byte == UInt8(ascii: ";"), !inQuotes {
                parameters.append(Substring(utf8[start..<index]))
                start = utf8.index(after: index)
            }
        }
        parameters.append(Substring(utf8[start...]))
        if inQuotes {
            var mediaType = Substring(contentType.unicodeScalars.prefix { $0 != ";" && $0 != "\"" })
            while let last = mediaType.unicodeScalars.last, last == " " || last == "\t" {
                mediaType.unicodeScalars.removeLast()
            }
            return String(mediaType)
        }
        let kept = parameters.enumerated().filter { offset, parameter in
            offset == 0 || !parameter.drop { $0 == " " || $0 == "\t" }.lowercased().hasPrefix("boundary=")
        }
        return kept.map { String($0.element) }.joined(separator: ";")
    }

    /// Joins a base URL and a raw path: the base's path prefix is kept, the join has exactly one slash, and each
    /// path segment is percent-encoded (`%` included: the path is text, so `%2e` is sent as `%252e`).
    ///
    /// A `.` or `..` segment is refused: a server that normalises the path (RFC 3986 §5.2.4) would resolve it, so
    /// `../admin` under `https://host/v1/` would reach `/admin`. Encoded dots cannot climb: `%2e%2e` stays the
    /// literal text `%2e%2e`.
    static func url(base: URL, path: String) throws(NetworkAgentError) -> URL {
        // The common case without URLComponents (which parses the base, then builds and parses the join again):
        // a plain base, whose join URLComponents would spell the same (`theJoinWithoutURLComponentsAgreesWithIt`).
        if !path.isEmpty, let prefix = plainBase(base.absoluteString) {
            let encoded = try encodedPath(path, base: base)
            // Joined in one string of the final size: `prefix + "/" + encoded` made the join twice.
            var joined = ""
            joined.reserveCapacity(prefix.utf8.count + 1 + encoded.utf8.count)
            joined += prefix
            joined += "/"
            joined += encoded
            if let url = URL(string: joined) { return url }
        }
        return try urlByComponents(base: base, path: path)
    }

    /// ``url(base:path:)`` through `URLComponents`, for every base (the reference the plain join agrees with).
    static func urlByComponents(base: URL, path: String) throws(NetworkAgentError) -> URL {
        guard var components = URLComponents(url: base, resolvingAgainstBaseURL: true), components.host != nil else {
            throw NetworkAgentError(.invalidURL, "\(base.absoluteString) is not an absolute http(s) URL")
        }
        if !path.isEmpty {
            var prefix = Substring(components.percentEncodedPath)
            while prefix.hasSuffix("/") { prefix = prefix.dropLast() }
            components.percentEncodedPath = prefix + "/" + (try encodedPath(path, base: base))
        }
        guard let url = components.url else {
            throw NetworkAgentError(.invalidURL, "\(base.absoluteString) and path \(path) do not form a URL")
        }
        return url
    }

    /// `path` without its leading slashes, each segment percent-encoded, joined by `/`; a dot segment is refused.
    static func encodedPath(_ path: String, base: URL) throws(NetworkAgentError) -> String {
        var suffix = Substring(path)
        while suffix.hasPrefix("/") { suffix = suffix.dropFirst() }
        // Most paths need no encoding: checked on the bytes, the path is its own encoding, without splitting it
        // into segments and joining them again.
        if suffix.utf8.allSatisfy({ PercentEncoding.isPathCharacter($0) || $0 == UInt8(ascii: "/") }) {
            guard !hasDotSegment(suffix.utf8) else { throw dotSegmentError(path, base: base) }
            return String(suffix)
        }
        return try encodedPathBySegments(path, base: base)
    }

    /// ``encodedPath(_:base:)`` segment by segment, for every path (the reference its shortcut agrees with).
    static func encodedPathBySegments(_ path: String, base: URL) throws(NetworkAgentError) -> String {
        var suffix = Substring(path)
        while suffix.hasPrefix("/") { suffix = suffix.dropFirst() }
        let segments = suffix.split(separator: "/", omittingEmptySubsequences: false)
        if segments.contains(where: { $0 == "." || $0 == ".." }) { throw dotSegmentError(path, base: base) }
        return segments.map { PercentEncoding.encode($0, allowing: PercentEncoding.isPathCharacter) }
            .joined(separator: "/")
    }

    /// Whether a `/`-separated path has a `.` or `..` segment.
    private static func hasDotSegment(_ path: Substring.UTF8View) -> Bool {
        var length = 0
        var dots = 0
        for byte in path {
            if byte == UInt8(ascii: "/") {
                if length > 0 && length == dots && length <= 2 { return true }
                length = 0
                dots = 0
            } else {
                length += 1
                if byte == UInt8(ascii: ".") { dots += 1 }
            }
        }
        return length > 0 && length == dots && length <= 2
    }

    private static func dotSegmentError(_ path: String, base: URL) -> NetworkAgentError {
        NetworkAgentError(
            .invalidURL,
            "the path \(path.debugDescription) has a dot segment (\".\" or \"..\"), which a server would resolve "
                + "against \(base.absoluteString); name the resource without one"
        )
    }

    /// `text` without its trailing slashes when it is a plain absolute URL: `http://` or `https://`, a host of
    /// lowercase letters, digits, dots and hyphens, an optional port (digits, no leading zero), then a path of path
    /// characters, `/` and `%`, and nothing else (no user, query or fragment). `nil` for anything else, which
    /// `URLComponents` joins.
    static func plainBase(_ text: String) -> Substring? {
        let utf8 = text.utf8
        let schemeLength = text.hasPrefix("https://") ? 8 : text.hasPrefix("http://") ? 7 : 0
        guard schemeLength > 0 else { return nil }
        var index = utf8.index(utf8.startIndex, offsetBy: schemeLength)
        func advance(while accepted: (UInt8) -> Bool) {
            while index != utf8.endIndex, accepted(utf8[index]) { index = utf8.index(after: index) }
        }
        let hostStart = index
        advance {
            ($0 >= UInt8(ascii: "a") && $0 <= UInt8(ascii: "z")) || ($0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9"))
                || $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "-")
        }
        guard index != hostStart else { return nil }
        if index != utf8.endIndex, utf8[index] == UInt8(ascii: ":") {
            index = utf8.index(after: index)
            let portStart = index
            advance { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
            guard index != portStart, utf8[portStart] != UInt8(ascii: "0") else { return nil }
        }
        let pathStart = index
        advance { PercentEncoding.isPathCharacter($0) || $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "%") }
        guard index == utf8.endIndex, pathStart == utf8.endIndex || utf8[pathStart] == UInt8(ascii: "/") else {
            return nil
        }
        var stop = index
        while stop != pathStart, utf8[utf8.index(before: stop)] == UInt8(ascii: "/") { stop = utf8.index(before: stop) }
        return text[..<stop]
    }

    /// Appends an encoded query to a URL's existing query.
    static func url(_ url: URL?, appendingQuery query: String) throws(NetworkAgentError) -> URL {
        guard let url, var components = URLComponents(url: url, resolvingAgainstBaseURL: true) else {
            throw NetworkAgentError(.invalidURL, "the request has no URL to add a query to")
        }
        guard !query.isEmpty else { return url }
        let existing = components.percentEncodedQuery.map { $0.isEmpty ? "" : $0 + "&" } ?? ""
        components.percentEncodedQuery = existing + query
        guard let result = components.url else {
            throw NetworkAgentError(.invalidURL, "the query does not fit the URL \(url.absoluteString)")
        }
        return result
    }
}
