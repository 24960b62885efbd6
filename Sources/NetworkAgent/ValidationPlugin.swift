import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Throws ``NetworkAgentError/Code/unacceptableStatus`` for responses whose status code is not acceptable.
///
/// Opt in with `.validate()` (2xx) or `.validate(200..<400)`. The error carries the status code, headers and
/// body. Register it after plugins that handle statuses themselves (a token refresher, a retry).
public struct ValidationPlugin: NetworkAgentPlugin {
    /// The status codes that pass.
    let acceptableStatusCodes: Range<Int>

    /// Creates a validation plugin.
    ///
    /// - Parameter acceptableStatusCodes: The status codes that pass; defaults to `200..<300`.
    package init(acceptableStatusCodes: Range<Int> = 200..<300) {
        self.acceptableStatusCodes = acceptableStatusCodes
    }

    /// Throws for a non-HTTP response or an unacceptable status code; passes everything else through.
    ///
    /// - Parameters:
    ///   - response: The response so far.
    ///   - data: The body so far, carried by the error.
    ///   - request: The final request sent, named in the error's message.
    ///   - endpoint: The endpoint the call was made with.
    ///   - agent: Unused.
    /// - Returns: `data` and `response`, unchanged, when the status code is acceptable.
    /// - Throws: ``NetworkAgentError`` with ``NetworkAgentError/Code/unacceptableStatus`` (with the response and body)
    ///   or, for a response that is not HTTP, ``NetworkAgentError/Code/invalidResponse``.
    public func onResponse(
        _ response: URLResponse,
        data: Data,
        request: URLRequest,
        endpoint: any NetworkAgentEndpoint,
        agent: NetworkAgent
    ) async throws -> (data: Data, response: URLResponse) {
        guard let http = response as? HTTPURLResponse else {
            throw NetworkAgentError(.invalidResponse, "\(request.url?.absoluteString ?? "?") gave no HTTP response")
        }
        guard acceptableStatusCodes.contains(http.statusCode) else {
            throw NetworkAgentError(
                .unacceptableStatus,
                "\(request.httpMethod ?? "") \(request.url?.absoluteString ?? "?") answered \(http.statusCode)",
                response: http,
                data: data
            )
        }
        return (data: data, response: response)
    }
}

extension NetworkAgentPlugin where Self == ValidationPlugin {
    /// A plugin that throws ``NetworkAgentError/Code/unacceptableStatus`` outside `acceptableStatusCodes`.
    ///
    /// - Parameter acceptableStatusCodes: The status codes that pass; defaults to `200..<300`.
    /// - Returns: A ``ValidationPlugin``.
    public static func validate(_ acceptableStatusCodes: Range<Int> = 200..<300) -> ValidationPlugin {
        ValidationPlugin(acceptableStatusCodes: acceptableStatusCodes)
    }
}
