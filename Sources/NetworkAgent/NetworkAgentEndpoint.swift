import Foundation

/// One call of your API, usually a case of an enum that conforms to this protocol.
///
/// Conforming types are `Sendable`: plugins may store them and they cross actor boundaries.
///
/// ```swift
/// enum Api: NetworkAgentEndpoint {
///     case post(id: Int)
///     var baseURL: URL { URL(string: "https://example.com/api")! }
///     var path: String { if case .post(let id) = self { "/posts/\(id)" } else { "" } }
///     var method: HTTPMethod { .get }
///     var task: HTTPTask { .requestPlain }
/// }
/// ```
public protocol NetworkAgentEndpoint: Sendable {
    /// The base URL, which may carry a path prefix (`https://example.com/api`) that is kept.
    var baseURL: URL { get }
    /// The path appended to ``baseURL`` as raw text: each segment is percent-encoded, so `%` means a
    /// literal percent sign; slashes at the join never double.
    var path: String { get }
    /// The HTTP method.
    var method: HTTPMethod { get }
    /// Request headers. Defaults to `Content-Type: application/json` and `Accept: application/json`.
    var headers: [String: String] { get }
    /// What the request carries: nothing, attributes, raw content or multipart parts.
    var task: HTTPTask { get }
    /// A deadline for the whole request, redirects included. `nil` (the default) uses the agent's
    /// ``NetworkAgentConfiguration/timeout``. Sub-second values are honoured.
    var timeout: Duration? { get }
    /// The most bytes this endpoint's response bodies may have. `nil` (the default) uses the agent's
    /// ``NetworkAgentConfiguration/maximumResponseBytes``; `Int.max` lifts the bound, e.g. for a download or a
    /// long-lived event stream. A larger body fails with ``NetworkAgentError/Code/responseTooLarge``.
    var maximumResponseBytes: Int? { get }
}

extension NetworkAgentEndpoint {
    /// `Content-Type: application/json` and `Accept: application/json`.
    public var headers: [String: String] {
        ["Content-Type": "application/json", "Accept": "application/json"]
    }

    /// `nil`: the agent's configured timeout applies.
    public var timeout: Duration? { nil }

    /// `nil`: the agent's ``NetworkAgentConfiguration/maximumResponseBytes`` applies.
    public var maximumResponseBytes: Int? { nil }
}
