/// Sends one HTTP exchange. The last link of every plugin chain.
///
/// Implementations must be safe to call from many tasks at once. They follow redirects themselves (or not),
/// honour `URLRequest.timeoutInterval` as the deadline of the whole exchange and throw ``NetworkAgentError`` with
/// ``NetworkAgentError/Code/cancelled`` when the calling task is cancelled. NetworkAgent ships
/// ``URLSessionTransport``; `NetworkAgentTesting` has a stub transport for unit tests.
public protocol HTTPTransport: Sendable {
    /// Sends a request and returns the body and response.
    ///
    /// - Parameter request: The final request, after every plugin's `onRequest`.
    /// - Returns: The response body and the response, whatever its status code.
    /// - Throws: ``NetworkAgentError`` for transport failures, timeouts and cancellation.
    func send(_ request: URLRequest) async throws -> (data: Data, response: URLResponse)
}
