import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The rest of a call's network exchange, as handed to ``NetworkAgentPlugin/intercept(_:endpoint:next:)``.
///
/// Calling it runs the interceptors registered after the current one and then the transport. It may be called
/// several times (each call is a new attempt) or not at all.
public struct NetworkAgentExchange: Sendable {
    private let plugins: ArraySlice<any NetworkAgentPlugin>
    private let endpoint: any NetworkAgentEndpoint
    private let call: CallState
    /// The agent whose transport ends the exchange; use it for side requests that skip the chain.
    public let agent: NetworkAgent

    /// Whether the caller streams the body (``NetworkAgentProvider/stream(endpoint:progress:)``).
    ///
    /// Then a 2xx response comes back from `next` with an empty body while its bytes go straight to the caller:
    /// do not cache or transform that body, and do not call `next` again after returning such a response.
    /// Other statuses come back with up to 1 MiB of their body, so a plugin can act on them (refresh a token,
    /// retry) before any byte reaches the caller.
    public var isStreaming: Bool { call.isStreaming }

    init(
        plugins: ArraySlice<any NetworkAgentPlugin>,
        endpoint: any NetworkAgentEndpoint,
        agent: NetworkAgent,
        call: CallState
    ) {
        self.plugins = plugins
        self.endpoint = endpoint
        self.agent = agent
        self.call = call
    }

    /// Runs the rest of the exchange.
    ///
    /// - Parameter request: The request to send.
    /// - Returns: The body and response from the inner interceptors or the transport.
    /// - Throws: ``NetworkAgentError`` from the transport, or whatever an inner interceptor throws.
    public func callAsFunction(_ request: URLRequest) async throws -> (data: Data, response: URLResponse) {
        guard let plugin = plugins.first else {
            let prepared = try agent.prepare(request)
            call.recordSent(prepared)
            guard call.isStreaming else { return try await agent.sendPrepared(prepared) }
            return try await openStream(prepared)
        }
        let rest = NetworkAgentExchange(plugins: plugins.dropFirst(), endpoint: endpoint, agent: agent, call: call)
        return try await plugin.intercept(request, endpoint: endpoint, next: rest)
    }

    /// The most of an error response's body read before the stream is closed.
    static let errorBodyLimit = 1 << 20

    private func openStream(_ request: URLRequest) async throws -> (data: Data, response: URLResponse) {
        let opened = try await agent.streamPrepared(request)
        if (200..<300).contains(opened.statusCode) {
            call.keep(opened.body)
            return (data: Data(), response: opened.response)
        }
        var data = Data()
        for try await chunk in opened.body {
            data.append(chunk.prefix(Self.errorBodyLimit - data.count))
            if data.count >= Self.errorBodyLimit { break }
        }
        return (data: data, response: opened.response)
    }
}

/// What one provider call shares across its exchange: the last request sent and, when streaming, the open body.
final class CallState: Sendable {
    let isStreaming: Bool
    private let state = Locked<(sent: URLRequest?, body: HTTPByteStream?)>((nil, nil))

    init(isStreaming: Bool) {
        self.isStreaming = isStreaming
    }

    func recordSent(_ request: URLRequest) {
        state.withLock { $0.sent = request }
    }

    var lastSent: URLRequest? { state.withLock { $0.sent } }

    /// Keeps the body of a 2xx streamed response; an earlier one (an interceptor called `next` again) is dropped.
    func keep(_ body: HTTPByteStream) {
        state.withLock { $0.body = body }
    }

    var body: HTTPByteStream? { state.withLock { $0.body } }
}
