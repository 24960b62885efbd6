import Synchronization

/// The rest of a call's network exchange, as handed to ``NetworkAgentPlugin/intercept(_:endpoint:next:)``.
///
/// Calling it runs the interceptors registered after the current one and then the transport. It may be called
/// several times (each call is a new attempt) or not at all.
public struct NetworkAgentExchange: Sendable {
    private let plugins: ArraySlice<any NetworkAgentPlugin>
    private let endpoint: any NetworkAgentEndpoint
    private let recorder: SentRequestRecorder
    /// The agent whose transport ends the exchange; use it for side requests that skip the chain.
    public let agent: NetworkAgent

    init(
        plugins: ArraySlice<any NetworkAgentPlugin>,
        endpoint: any NetworkAgentEndpoint,
        agent: NetworkAgent,
        recorder: SentRequestRecorder
    ) {
        self.plugins = plugins
        self.endpoint = endpoint
        self.agent = agent
        self.recorder = recorder
    }

    /// Runs the rest of the exchange.
    ///
    /// - Parameter request: The request to send.
    /// - Returns: The body and response from the inner interceptors or the transport.
    /// - Throws: ``NetworkAgentError`` from the transport, or whatever an inner interceptor throws.
    public func callAsFunction(_ request: URLRequest) async throws -> (data: Data, response: URLResponse) {
        guard let plugin = plugins.first else {
            let prepared = try agent.prepare(request)
            recorder.record(prepared)
            return try await agent.sendPrepared(prepared)
        }
        let rest = NetworkAgentExchange(
            plugins: plugins.dropFirst(),
            endpoint: endpoint,
            agent: agent,
            recorder: recorder
        )
        return try await plugin.intercept(request, endpoint: endpoint, next: rest)
    }
}

/// Remembers the last request handed to the transport during one call.
final class SentRequestRecorder: Sendable {
    private let last = Mutex<URLRequest?>(nil)

    func record(_ request: URLRequest) {
        last.withLock { $0 = request }
    }

    var lastSent: URLRequest? { last.withLock { $0 } }
}
