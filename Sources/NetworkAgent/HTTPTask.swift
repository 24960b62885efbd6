/// What a request carries.
public enum HTTPTask: Sendable {
    /// No body and no query.
    case requestPlain
    /// Attributes encoded as a JSON body, a URL query or a form body (see ``HTTPURLEncoding``).
    ///
    /// Use property-list-like values: `String`, `Int`, `Double`, `Bool`, arrays and dictionaries of them.
    /// A value that cannot be encoded fails the request with ``NetworkAgentError/Code/encoding``.
    case requestAttributes(attributes: [String: any Sendable], encoding: HTTPURLEncoding)
    /// A body sent as given: an `Encodable` value as JSON, `Data` as is, a `String` as UTF-8.
    ///
    /// Any other value fails the request with ``NetworkAgentError/Code/encoding``. Unless the endpoint sets a
    /// `Content-Type`, it is `application/json`, `application/octet-stream` or `text/plain; charset=utf-8`.
    case requestWithoutAttributes(content: any Sendable)
    /// A `multipart/form-data` body made of the parts, in order.
    ///
    /// A `Boundary-<UUID>` boundary is generated per request and appended to the endpoint's
    /// `Content-Type: multipart/form-data` as `; boundary=…`, replacing any `boundary` the endpoint declared.
    /// Bodies larger than ``NetworkAgentConfiguration/multipartMemoryThreshold`` are streamed from a temporary file.
    case upload(parts: [HTTPMultipartTask])
}
