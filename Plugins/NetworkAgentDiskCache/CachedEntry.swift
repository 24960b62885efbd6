import Foundation

/// A stored response: its key, status, header fields, body and the two timestamps the age calculation of
/// RFC 9111 §4.2.3 needs.
///
/// Header fields are kept as the transport delivered them (one value per name, repeated fields joined with
/// `, `), minus the hop-by-hop fields a cache must not store (§3.1).
public struct CachedEntry: Hashable, Sendable {
    /// What the entry is filed under.
    public var key: CacheKey
    /// The URL of the response (after redirects, if the transport followed any).
    public var responseURL: URL
    /// The status code.
    public var statusCode: Int
    /// The response header fields.
    public var headers: [String: String]
    /// The response body (empty for `HEAD`).
    public var body: Data
    /// When the request that produced (or last revalidated) the response was sent: `request_time` of §4.2.3.
    public var requestDate: Date
    /// When that response was received: `response_time` of §4.2.3.
    public var responseDate: Date

    /// Creates an entry.
    ///
    /// - Parameters:
    ///   - key: What the entry is filed under.
    ///   - responseURL: The URL of the response.
    ///   - statusCode: The status code.
    ///   - headers: The response header fields.
    ///   - body: The body.
    ///   - requestDate: When the request was sent.
    ///   - responseDate: When the response was received.
    public init(
        key: CacheKey,
        responseURL: URL,
        statusCode: Int,
        headers: [String: String],
        body: Data,
        requestDate: Date,
        responseDate: Date
    ) {
        self.key = key
        self.responseURL = responseURL
        self.statusCode = statusCode
        self.headers = headers
        self.body = body
        self.requestDate = requestDate
        self.responseDate = responseDate
    }

    /// The value of a header field, found case-insensitively.
    ///
    /// - Parameter name: The field name, in any case.
    /// - Returns: The value, or `nil` when the response has no such field.
    public func header(_ name: String) -> String? {
        if let exact = headers[name] { return exact }
        return headers.first { $0.key.equalsIgnoringASCIICase(name) }?.value
    }

    /// Sets or, with `nil`, removes a header field, whatever the case of the name already stored.
    mutating func setHeader(_ name: String, _ value: String?) {
        for existing in headers.keys where existing.equalsIgnoringASCIICase(name) {
            headers[existing] = nil
        }
        if let value { headers[name] = value }
    }

    /// Whether the body is the whole representation a 200 carried, byte for byte, so that ranges of it can be
    /// served (RFC 9110 §14.1.4: positions count in the representation as sent, content coding included): a 200
    /// without `Content-Range`, without a content coding (the transport may have decoded one), and with a
    /// `Content-Length`, if any, equal to the body's length.
    var holdsCompleteRepresentation: Bool {
        guard statusCode == 200, header("Content-Range") == nil else { return false }
        if let coding = header("Content-Encoding"), !coding.trimmingCharacters(in: .whitespaces).isEmpty,
            coding.trimmingCharacters(in: .whitespaces).lowercased() != "identity"
        {
            return false
        }
        guard let length = header("Content-Length") else { return true }
        return Int(length.trimmingCharacters(in: .whitespaces)) == body.count
    }

    /// The approximate memory an entry takes: body, header text and a fixed overhead.
    var approximateByteCount: Int {
        body.count + headers.reduce(256) { $0 + $1.key.utf8.count + $1.value.utf8.count + 4 }
    }
}
