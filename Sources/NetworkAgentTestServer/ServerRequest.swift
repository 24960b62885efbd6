import Foundation

/// One HTTP request as the ``LoopbackServer`` received it.
public struct ServerRequest: Sendable {
    /// The request method exactly as sent, e.g. `GET`.
    public let method: String
    /// The raw request-target as received, e.g. `/a%20b?x=1`.
    public let target: String
    /// The target without its query, still percent-encoded, e.g. `/a%20b`.
    public let path: String
    /// The query items, percent-decoded (a `+` stays a `+`); an item without `=` has a nil value.
    public let queryItems: [URLQueryItem]
    /// The header fields in wire order, names as received.
    public let headers: [(name: String, value: String)]
    /// The body, de-chunked if the request was chunked. Empty when the request had none.
    public let body: Data
    /// Whether the body arrived with `Transfer-Encoding: chunked`.
    public let isChunked: Bool
    /// Which accepted TCP connection carried the request: 1 for the first one the server accepted, then 2, ...
    public let connectionID: Int

    /// Creates a request; ``path`` and ``queryItems`` are derived from `target`.
    ///
    /// - Parameters:
    ///   - method: The request method, e.g. `GET`.
    ///   - target: The raw request-target, e.g. `/a%20b?x=1`.
    ///   - headers: The header fields in wire order.
    ///   - body: The body, de-chunked.
    ///   - isChunked: Whether the body arrived with `Transfer-Encoding: chunked`.
    ///   - connectionID: The number of the connection that carried the request.
    public init(
        method: String,
        target: String,
        headers: [(name: String, value: String)] = [],
        body: Data = Data(),
        isChunked: Bool = false,
        connectionID: Int = 0
    ) {
        self.method = method
        self.target = target
        self.headers = headers
        self.body = body
        self.isChunked = isChunked
        self.connectionID = connectionID
        if let questionMark = target.firstIndex(of: "?") {
            self.path = String(target[..<questionMark])
            self.queryItems = Self.parseQuery(target[target.index(after: questionMark)...])
        } else {
            self.path = target
            self.queryItems = []
        }
    }

    /// The value of the first header field with this name, compared case-insensitively.
    ///
    /// - Parameter name: The header field name.
    /// - Returns: The first value, or `nil` when the request has no such field.
    public func header(_ name: String) -> String? {
        headers.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value
    }

    /// The values of every header field with this name, compared case-insensitively, in wire order.
    ///
    /// - Parameter name: The header field name.
    /// - Returns: The values, empty when the request has no such field.
    public func headerValues(_ name: String) -> [String] {
        headers.filter { $0.name.caseInsensitiveCompare(name) == .orderedSame }.map(\.value)
    }

    /// The body decoded as UTF-8 (invalid sequences replaced).
    public var bodyText: String {
        String(decoding: body, as: UTF8.self)
    }

    private static func parseQuery(_ query: Substring) -> [URLQueryItem] {
        query.split(separator: "&", omittingEmptySubsequences: true).map { item in
            if let equals = item.firstIndex(of: "=") {
                let name = decode(item[..<equals])
                let value = decode(item[item.index(after: equals)...])
                return URLQueryItem(name: name, value: value)
            }
            return URLQueryItem(name: decode(item), value: nil)
        }
    }

    private static func decode(_ text: Substring) -> String {
        let raw = String(text)
        return raw.removingPercentEncoding ?? raw
    }
}
