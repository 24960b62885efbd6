import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Sends one HTTP exchange. The last link of every plugin chain.
///
/// Implementations must be safe to call from many tasks at once. They follow redirects themselves (or not),
/// honour `URLRequest.timeoutInterval` as the deadline of the whole exchange and throw ``NetworkAgentError`` with
/// ``NetworkAgentError/Code/cancelled`` when the calling task is cancelled. A transport that sends over the
/// network reads `URLRequest.sensitiveHeaderNames` (removing those headers, like `Authorization`, on a redirect to
/// another origin) and sets it to `[]` before sending, so that its field never goes out. NetworkAgent ships
/// ``URLSessionTransport``; `NetworkAgentTesting` has a stub transport for unit tests.
public protocol HTTPTransport: Sendable {
    /// Sends a request and returns the body and response.
    ///
    /// - Parameter request: The final request, after every plugin's `onRequest`.
    /// - Returns: The response body and the response, whatever its status code.
    /// - Throws: ``NetworkAgentError`` for transport failures, timeouts and cancellation.
    func send(_ request: URLRequest) async throws -> (data: Data, response: URLResponse)

    /// Sends a request and returns at the response headers, with the body as a stream of chunks.
    ///
    /// The default implementation calls ``send(_:)`` and streams the whole body as one chunk.
    ///
    /// - Parameter request: The final request, after every plugin's `onRequest`.
    /// - Returns: The response head and the body chunks.
    /// - Throws: ``NetworkAgentError`` for transport failures, timeouts and cancellation.
    func stream(_ request: URLRequest) async throws -> HTTPStreamResponse
}

extension HTTPTransport {
    /// Calls ``send(_:)`` and streams the whole body as one chunk.
    ///
    /// - Parameter request: The final request, after every plugin's `onRequest`.
    /// - Returns: The response head and the whole body as one chunk.
    /// - Throws: What ``send(_:)`` throws, ``NetworkAgentError/Code/invalidResponse`` for a response that is not
    ///   HTTP, or ``NetworkAgentError/Code/responseTooLarge`` for a body over the calling agent's limit.
    public func stream(_ request: URLRequest) async throws -> HTTPStreamResponse {
        let (data, response) = try await send(request)
        guard let http = response as? HTTPURLResponse else {
            throw NetworkAgentError(.invalidResponse, "\(request.url?.absoluteString ?? "?") gave no HTTP response")
        }
        try NetworkAgent.check(data, of: request, response: http, against: NetworkAgent.maximumResponseBytes)
        return HTTPStreamResponse(response: http, body: HTTPByteStream(data: data))
    }
}
