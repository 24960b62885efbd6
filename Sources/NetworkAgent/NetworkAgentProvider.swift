/// Performs the requests of one endpoint type through a chain of plugins.
///
/// ```swift
/// let provider = NetworkAgentProvider<Api>(plugins: [AuthHeaderInjector(token: { "t" })])
/// let (data, response) = try await provider.request(endpoint: .posts)
/// ```
///
/// The provider neither checks status codes nor decodes bodies: add `.validate()` for the former and decode
/// at the call site. See ``NetworkAgentPlugin`` for the order in which plugins run.
public struct NetworkAgentProvider<E: NetworkAgentEndpoint>: Sendable {
    /// The plugins, in registration order.
    public let plugins: [any NetworkAgentPlugin]
    /// The agent that builds and sends requests and is handed to plugins for side requests.
    public let agent: NetworkAgent

    /// A provider on the shared URLSession transport.
    ///
    /// - Parameter plugins: The interceptor chain, in order.
    public init(plugins: [any NetworkAgentPlugin] = []) {
        self.init(plugins: plugins, agent: NetworkAgent())
    }

    /// A provider on a given agent (and so transport and configuration).
    ///
    /// - Parameters:
    ///   - plugins: The interceptor chain, in order.
    ///   - agent: The agent that builds and sends requests.
    public init(plugins: [any NetworkAgentPlugin] = [], agent: NetworkAgent) {
        self.plugins = plugins
        self.agent = agent
    }

    /// Runs a request through the plugin chain and returns the raw body and response.
    ///
    /// - Parameter endpoint: The endpoint to call.
    /// - Returns: The body and response after every plugin's `onResponse`, whatever the status code.
    /// - Throws: ``NetworkAgentError`` from building or sending the request, or any error a plugin throws.
    public func request(endpoint: E) async throws -> (data: Data, response: URLResponse) {
        var request = try agent.urlRequest(for: endpoint)
        for plugin in plugins {
            request = try await plugin.onRequest(request, endpoint: endpoint)
        }
        let recorder = SentRequestRecorder()
        let exchange = NetworkAgentExchange(plugins: plugins[...], endpoint: endpoint, agent: agent, recorder: recorder)
        var (data, response) = try await exchange(request)
        let sent = recorder.lastSent ?? request
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
}
