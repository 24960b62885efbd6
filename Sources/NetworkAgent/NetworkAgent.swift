import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Builds requests from endpoints and sends them through a transport, without any plugin.
///
/// A provider delegates to its agent, and hands the agent to plugins so they can fire side requests
/// (a token refresh, a retry) that do not re-run the plugin chain.
public struct NetworkAgent: Sendable {
    /// The transport that sends every request.
    public let transport: any HTTPTransport
    /// The settings applied to every request.
    public let configuration: NetworkAgentConfiguration

    /// An agent on ``URLSessionTransport/shared`` with the default configuration.
    public init() {
        self.init(transport: URLSessionTransport.shared)
    }

    /// An agent on a given transport.
    ///
    /// - Parameters:
    ///   - transport: The transport that sends requests, e.g. a `URLSessionTransport` or a test stub.
    ///   - configuration: The settings applied to every request.
    public init(transport: any HTTPTransport, configuration: NetworkAgentConfiguration = NetworkAgentConfiguration()) {
        self.transport = transport
        self.configuration = configuration
    }

    /// Fires a one-off request for an endpoint, without the plugin chain.
    ///
    /// Meant for side requests from inside plugins (a token refresh, a retry): skipping the chain is what keeps an
    /// interceptor from recursing into itself.
    ///
    /// - Parameter endpoint: The endpoint to call.
    /// - Returns: The body and response, whatever the status code.
    /// - Throws: ``NetworkAgentError``.
    public func request(_ endpoint: any NetworkAgentEndpoint) async throws -> (data: Data, response: URLResponse) {
        try await send(urlRequest(for: endpoint))
    }

    /// Sends a ready-made request without the plugin chain, e.g. the final request a plugin was handed, with a
    /// fresh `Authorization`.
    ///
    /// The agent adds its defaults (the `User-Agent`) and refuses headers with CR, LF or NUL.
    ///
    /// - Parameter request: The request to send.
    /// - Returns: The body and response, whatever the status code.
    /// - Throws: ``NetworkAgentError``.
    public func send(_ request: URLRequest) async throws -> (data: Data, response: URLResponse) {
        try await sendPrepared(prepare(request))
    }

    /// The request an endpoint stands for, before any plugin ran.
    ///
    /// - Parameter endpoint: The endpoint.
    /// - Returns: The request with URL, method, headers, deadline and body.
    /// - Throws: ``NetworkAgentError`` with ``NetworkAgentError/Code/invalidURL``,
    ///   ``NetworkAgentError/Code/invalidHeader`` or ``NetworkAgentError/Code/encoding``.
    public func urlRequest(for endpoint: any NetworkAgentEndpoint) throws -> URLRequest {
        try RequestBuilder(configuration: configuration).makeRequest(for: endpoint)
    }

    /// Applies the defaults and checks the headers of a request about to be sent.
    func prepare(_ request: URLRequest) throws(NetworkAgentError) -> URLRequest {
        var request = request
        RequestBuilder(configuration: configuration).applyDefaults(to: &request)
        try HTTPHeaderValidator.validate(request)
        return request
    }

    /// Sends a prepared request, mapping whatever the transport throws to ``NetworkAgentError``.
    func sendPrepared(_ request: URLRequest) async throws -> (data: Data, response: URLResponse) {
        try await mappingErrors(of: request) { try await transport.send(request) }
    }

    /// Opens a prepared request as a stream, mapping whatever the transport throws to ``NetworkAgentError``.
    func streamPrepared(_ request: URLRequest) async throws -> HTTPStreamResponse {
        try await mappingErrors(of: request) { try await transport.stream(request) }
    }

    private func mappingErrors<T>(of request: URLRequest, _ operation: () async throws -> T) async throws -> T {
        do {
            return try await operation()
        } catch let error as NetworkAgentError {
            throw error
        } catch is CancellationError {
            throw NetworkAgentError(.cancelled, "the request was cancelled")
        } catch let error as URLError {
            throw URLSessionTransport.map(error, request: request)
        } catch {
            throw NetworkAgentError(.transport, "the transport failed: \(error)", underlying: error)
        }
    }
}
