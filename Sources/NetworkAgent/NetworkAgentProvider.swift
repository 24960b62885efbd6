import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Performs the requests of one endpoint type through a chain of plugins.
///
/// ```swift
/// let provider = NetworkAgentProvider<Api>(plugins: [.validate()])
/// let (data, response) = try await provider.request(endpoint: .posts)
/// ```
///
/// The provider neither checks status codes nor decodes bodies: add `.validate()` for the former and decode
/// at the call site. See ``NetworkAgentPlugin`` for the order in which plugins run.
public struct NetworkAgentProvider<E: NetworkAgentEndpoint>: Sendable {
    /// The plugins, in registration order.
    let plugins: [any NetworkAgentPlugin]
    /// The agent that builds and sends requests and is handed to plugins for side requests.
    let agent: NetworkAgent
    /// The plugins and the agent again, behind one reference for the hops of every call's exchange.
    private let chain: ExchangeChain

    /// A provider on an agent (and so a transport and configuration); `NetworkAgentProvider<Api>()` is one on the
    /// shared URLSession transport without plugins.
    ///
    /// - Parameters:
    ///   - plugins: The interceptor chain, in order.
    ///   - agent: The agent that builds and sends requests; by default one on the shared URLSession transport.
    public init(plugins: [any NetworkAgentPlugin] = [], agent: NetworkAgent = NetworkAgent()) {
        self.plugins = plugins
        self.agent = agent
        self.chain = ExchangeChain(plugins: plugins, agent: agent)
    }

    /// Runs a request through the plugin chain and returns the raw body and response.
    ///
    /// - Parameters:
    ///   - endpoint: The endpoint to call.
    ///   - progress: Receives upload and download progress (see ``TransferProgress``); `nil` for none.
    /// - Returns: The body and response after every plugin's `onResponse`, whatever the status code.
    /// - Throws: ``NetworkAgentError`` from building or sending the request, or any error a plugin throws.
    public func request(
        endpoint: E,
        progress: TransferProgress.Handler? = nil
    ) async throws
        -> (data: Data, response: URLResponse)
    {
        let call = CallState(isStreaming: false)
        guard let progress else { return try await run(endpoint, call: call) }
        return try await TransferProgress.withHandler(progress) { try await run(endpoint, call: call) }
    }

    /// Runs a request through the plugin chain and returns at the response headers, with the body as a stream.
    ///
    /// `onRequest` plugins shape the request as usual. Interceptors see a 2xx response with an empty body (its
    /// bytes go to the caller, see ``NetworkAgentExchange/isStreaming``) and any other status with up to 1 MiB of
    /// its body, so a token refresher can retry a 401 before any byte is delivered. Nothing is retried once the
    /// caller has the stream. The endpoint's timeout is the deadline for the response headers (and, for a non-2xx
    /// status, for the part of its body read). A body the caller drops unread, or the body of a call that fails after
    /// its 2xx head (a plugin's `onResponse` threw), has its transfer cancelled at once.
    ///
    /// ```swift
    /// let stream = try await provider.stream(endpoint: .events)
    /// for try await event in stream.body.serverSentEvents() { print(event.data) }
    /// ```
    ///
    /// - Parameters:
    ///   - endpoint: The endpoint to call.
    ///   - progress: Receives upload and download progress; `nil` for none.
    /// - Returns: The response head and its body.
    /// - Throws: ``NetworkAgentError`` — with ``NetworkAgentError/Code/unacceptableStatus`` and the first MiB of the
    ///   body for a non-2xx status — or any error a plugin throws.
    public func stream(endpoint: E, progress: TransferProgress.Handler? = nil) async throws -> HTTPStreamResponse {
        let call = CallState(isStreaming: true)
        do {
            let (data, response) =
                if let progress {
                    try await TransferProgress.withHandler(progress) { try await run(endpoint, call: call) }
                } else {
                    try await run(endpoint, call: call)
                }
            guard let http = response as? HTTPURLResponse else {
                throw NetworkAgentError(.invalidResponse, "the stream of \(endpoint.path) gave no HTTP response")
            }
            guard (200..<300).contains(http.statusCode) else {
                throw NetworkAgentError(
                    .unacceptableStatus,
                    "\(http.url?.absoluteString ?? endpoint.path) answered \(http.statusCode) to a stream",
                    response: http,
                    data: data
                )
            }
            let body = call.body ?? HTTPByteStream(data: data)
            call.deliver(body)
            return HTTPStreamResponse(response: http, body: body)
        } catch {
            // A body opened for a call that fails here is never read: cancel its transfer now.
            call.fail()
            throw error
        }
    }

    private func run(_ typed: E, call: CallState) async throws -> (data: Data, response: URLResponse) {
        // Boxed once per call: each conversion of `E` to `any NetworkAgentEndpoint` allocates a box for an endpoint
        // that does not fit the existential inline, and every plugin hook takes one.
        let endpoint: any NetworkAgentEndpoint = typed
        let request: URLRequest
        do {
            request = try await requestAfterPlugins(for: endpoint)
        } catch {
            for plugin in plugins {
                await plugin.onFailureBeforeExchange(error, endpoint: endpoint)
            }
            throw error
        }
        let exchange = NetworkAgentExchange(chain: chain, endpoint: endpoint, call: call)
        var (data, response) = try await exchange(request)
        let sent = call.lastSent ?? request
        for plugin in plugins {
            (data, response) = try await plugin.onResponse(
                response,
                data: data,
                request: sent,
                endpoint: endpoint,
                agent: agent
            )
        }
        return (data: data, response: response)
    }

    /// The endpoint's request after every plugin's `onRequest`.
    ///
    /// Each plugin is handed the request (`consume`): nothing here holds it during the call, so a plugin that
    /// declares its parameter `consuming` changes the only reference, without Foundation's copy of the request.
    private func requestAfterPlugins(for endpoint: any NetworkAgentEndpoint) async throws -> URLRequest {
        var request = try agent.urlRequest(for: endpoint)
        for plugin in plugins {
            request = try await plugin.onRequest(consume request, endpoint: endpoint)
        }
        return request
    }
}
