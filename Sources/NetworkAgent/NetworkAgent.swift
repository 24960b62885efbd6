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
    /// interceptor from recursing into itself. A side request reports no progress to the handler of the call it is
    /// made in; pass `progress` to follow it. Its response limit is the endpoint's
    /// ``NetworkAgentEndpoint/maximumResponseBytes``, or else the agent's.
    ///
    /// - Parameters:
    ///   - endpoint: The endpoint to call.
    ///   - progress: Receives this request's upload and download progress; `nil` (the default) for none.
    /// - Returns: The body and response, whatever the status code.
    /// - Throws: ``NetworkAgentError``.
    public func request(
        _ endpoint: any NetworkAgentEndpoint,
        progress: TransferProgress.Handler? = nil
    ) async throws
        -> (data: Data, response: URLResponse)
    {
        try await sendAside(urlRequest(for: endpoint), endpoint: endpoint, progress: progress)
    }

    /// Sends a ready-made request without the plugin chain, e.g. the final request a plugin was handed, with a
    /// fresh `Authorization`.
    ///
    /// The agent adds its defaults (the `User-Agent`) and refuses headers with CR, LF or NUL. Like
    /// ``request(_:progress:)``, it reports progress only to `progress`; the response limit is the agent's
    /// ``NetworkAgentConfiguration/maximumResponseBytes`` (``send(_:for:progress:)`` applies an endpoint's).
    ///
    /// - Parameters:
    ///   - request: The request to send.
    ///   - progress: Receives this request's upload and download progress; `nil` (the default) for none.
    /// - Returns: The body and response, whatever the status code.
    /// - Throws: ``NetworkAgentError``.
    public func send(
        _ request: URLRequest,
        progress: TransferProgress.Handler? = nil
    ) async throws
        -> (data: Data, response: URLResponse)
    {
        try await sendAside(request, endpoint: nil, progress: progress)
    }

    /// Sends a ready-made request without the plugin chain within an endpoint's response limit: a side request a
    /// plugin makes for a call, such as a cache's background refresh, keeps the limit of the call's endpoint.
    ///
    /// Like ``send(_:progress:)``, except that the response limit is the endpoint's
    /// ``NetworkAgentEndpoint/maximumResponseBytes``, or else the agent's.
    ///
    /// - Parameters:
    ///   - request: The request to send.
    ///   - endpoint: The endpoint whose response limit applies.
    ///   - progress: Receives this request's upload and download progress; `nil` (the default) for none.
    /// - Returns: The body and response, whatever the status code.
    /// - Throws: ``NetworkAgentError``.
    public func send(
        _ request: URLRequest,
        for endpoint: any NetworkAgentEndpoint,
        progress: TransferProgress.Handler? = nil
    ) async throws
        -> (data: Data, response: URLResponse)
    {
        try await sendAside(request, endpoint: endpoint, progress: progress)
    }

    /// Sends a side request with its own progress handler (or none), never the one of the call it is made in.
    private func sendAside(
        _ request: URLRequest,
        endpoint: (any NetworkAgentEndpoint)?,
        progress: TransferProgress.Handler?
    ) async throws -> (data: Data, response: URLResponse) {
        let prepared = try prepare(request)
        return try await TransferProgress.withHandler(progress) {
            try await sendPrepared(prepared, for: endpoint)
        }
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

    /// Applies the defaults and checks the headers and the timeout of a request about to be sent.
    func prepare(_ request: URLRequest) throws(NetworkAgentError) -> URLRequest {
        var request = request
        RequestBuilder(configuration: configuration).applyDefaults(to: &request)
        try HTTPHeaderValidator.validate(request)
        _ = try HTTPTransportContext.timeLimit(of: request)
        return request
    }

    /// The response limit of the transport call running in this task, in bytes (`nil`: none), for the transport to
    /// enforce as bytes arrive. Set by the agent around each call of its transport only, so it never reaches a side
    /// request made elsewhere in the chain.
    @TaskLocal static var maximumResponseBytes: Int?

    /// The response limit of a request for `endpoint` (or of a ready-made request, without one).
    func maximumResponseBytes(for endpoint: (any NetworkAgentEndpoint)?) -> Int? {
        (endpoint?.maximumResponseBytes ?? configuration.maximumResponseBytes).map { max(0, $0) }
    }

    /// Sends a prepared request within the response limit of `endpoint` (or the agent's), mapping whatever the
    /// transport throws to ``NetworkAgentError``.
    ///
    /// ``URLSessionTransport`` stops a body at the limit as it arrives; another transport's body is checked here.
    func sendPrepared(
        _ request: URLRequest,
        for endpoint: (any NetworkAgentEndpoint)? = nil
    ) async throws
        -> (data: Data, response: URLResponse)
    {
        let limit = maximumResponseBytes(for: endpoint)
        let (data, response) = try await mappingErrors(of: request) {
            try await Self.$maximumResponseBytes.withValue(limit) { try await transport.send(request) }
        }
        try Self.check(data, of: request, response: response, against: limit)
        return (data: data, response: response)
    }

    /// Throws ``NetworkAgentError/Code/responseTooLarge`` when a whole body is over `limit`; for transports that
    /// do not stop a body as it arrives.
    static func check(_ data: Data, of request: URLRequest, response: URLResponse, against limit: Int?) throws {
        guard let limit, data.count > limit else { return }
        throw NetworkAgentError(
            .responseTooLarge,
            "the response body of \(request.url?.absoluteString ?? "the request") has \(data.count) bytes, more "
                + "than the limit of \(limit)",
            response: response as? HTTPURLResponse
        )
    }

    /// Opens a prepared request as a stream within the response limit of `endpoint` (or the agent's), mapping
    /// whatever the transport throws to ``NetworkAgentError``.
    func streamPrepared(
        _ request: URLRequest,
        for endpoint: (any NetworkAgentEndpoint)? = nil
    ) async throws
        -> HTTPStreamResponse
    {
        let limit = maximumResponseBytes(for: endpoint)
        return try await mappingErrors(of: request) {
            try await Self.$maximumResponseBytes.withValue(limit) { try await transport.stream(request) }
        }
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
