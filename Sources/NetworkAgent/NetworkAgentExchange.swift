import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The rest of a call's network exchange, as handed to ``NetworkAgentPlugin/intercept(_:endpoint:next:)``.
///
/// Calling it runs the interceptors registered after the current one and then the transport. It may be called
/// several times (each call is a new attempt) or not at all.
public struct NetworkAgentExchange: Sendable {
    /// The provider's plugins and agent, shared by every hop of every call.
    private let chain: ExchangeChain
    /// The position in `chain.plugins` of the interceptor this exchange runs first.
    private let position: Int
    private let endpoint: any NetworkAgentEndpoint
    let call: CallState

    /// The agent whose transport ends the exchange; use it for side requests that skip the chain.
    public var agent: NetworkAgent { chain.agent }

    /// Whether the caller streams the body (``NetworkAgentProvider/stream(endpoint:progress:)``).
    ///
    /// Then a 2xx response comes back from `next` with an empty body while its bytes go straight to the caller:
    /// do not cache or transform that body, and do not call `next` again after returning such a response; to
    /// measure or log the body, observe its end with ``onStreamEnd(_:)``. Other statuses come back with up to
    /// 1 MiB of their body, read within the request's `timeoutInterval`, so a plugin can act on them (refresh a
    /// token, retry) before any byte reaches the caller.
    public var isStreaming: Bool { call.isStreaming }

    /// The exchange of a call from its outermost interceptor on.
    init(chain: ExchangeChain, endpoint: any NetworkAgentEndpoint, call: CallState) {
        self.init(chain: chain, position: 0, endpoint: endpoint, call: call)
    }

    private init(chain: ExchangeChain, position: Int, endpoint: any NetworkAgentEndpoint, call: CallState) {
        self.chain = chain
        self.position = position
        self.endpoint = endpoint
        self.call = call
    }

    /// Runs the rest of the exchange.
    ///
    /// - Parameter request: The request to send.
    /// - Returns: The body and response from the inner interceptors or the transport.
    /// - Throws: ``NetworkAgentError`` from the transport, or whatever an inner interceptor throws.
    public func callAsFunction(_ request: URLRequest) async throws -> (data: Data, response: URLResponse) {
        guard position < chain.plugins.count else {
            let prepared = try chain.prepare(request)
            call.recordSent(prepared)
            return try await withAddedResponseField {
                guard call.isStreaming else { return try await chain.send(prepared, for: endpoint) }
                return try await openStream(prepared)
            }
        }
        let rest = NetworkAgentExchange(chain: chain, position: position + 1, endpoint: endpoint, call: call)
        return try await chain.plugins[position].intercept(request, endpoint: endpoint, next: rest)
    }

    /// Calls `observer` once when the body of this streamed call ends for the caller, with the bytes the caller
    /// was handed and whether the body completed, failed or was given up.
    ///
    /// Meant for plugins that measure or log bodies: in a streamed call (``isStreaming``) the 2xx response `next`
    /// returns has an empty body; register here and record the size when the caller is done with it. The observer
    /// sees the body the caller gets (the one streamed from the network, or a body an interceptor answered with,
    /// delivered as one chunk); if the call fails instead of handing a body over (a non-2xx status, a plugin
    /// throwing), it is called with ``HTTPStreamEnd/Outcome/cancelled`` and `0` bytes. So every registration made
    /// during a streamed call is called exactly once. In a call that does not stream, it is never called.
    ///
    /// The observer runs synchronously where the body ends (inside the caller's last read, or where the body is
    /// dropped): keep it short and do not block.
    ///
    /// ```swift
    /// struct StreamedBytes: NetworkAgentPlugin {
    ///     let record: @Sendable (Int) -> Void
    ///
    ///     func intercept(_ request: URLRequest, endpoint: any NetworkAgentEndpoint, next: NetworkAgentExchange)
    ///         async throws -> (data: Data, response: URLResponse)
    ///     {
    ///         let result = try await next(request)
    ///         let status = (result.response as? HTTPURLResponse)?.statusCode ?? 0
    ///         if next.isStreaming, (200..<300).contains(status) {
    ///             next.onStreamEnd { end in record(end.bytes) }  // counted when the caller is done
    ///         } else {
    ///             record(result.data.count)
    ///         }
    ///         return result
    ///     }
    /// }
    /// ```
    ///
    /// - Parameter observer: Called once with how the body ended.
    public func onStreamEnd(_ observer: @escaping @Sendable (HTTPStreamEnd) -> Void) {
        call.onStreamEnd(observer)
    }

    /// The most of an error response's body read before the stream is closed.
    static let errorBodyLimit = 1 << 20

    /// Opens the stream; a 2xx body goes to the caller, any other is read here (up to ``errorBodyLimit`` bytes)
    /// within the request's deadline, so that a plugin can act on it.
    private func openStream(_ request: URLRequest) async throws -> (data: Data, response: URLResponse) {
        let deadline = Self.deadline(of: request)
        let opened = try await agent.streamPrepared(request, for: endpoint)
        if (200..<300).contains(opened.statusCode) {
            call.keep(opened.body)
            return (data: Data(), response: opened.response)
        }
        let timeout = NetworkAgentError(
            .timedOut,
            "the \(opened.statusCode) error body from \(request.url?.absoluteString ?? "the server") did not end "
                + "within \(request.timeoutInterval) s"
        )
        let timer = deadline.map { opened.body.buffer.expire(at: $0, with: timeout) }
        defer { timer?.cancel() }
        var data = Data()
        for try await chunk in opened.body {
            data.append(chunk.prefix(Self.errorBodyLimit - data.count))
            if data.count >= Self.errorBodyLimit { break }
        }
        return (data: data, response: opened.response)
    }

    /// When a request started now must be done, by the transport's own rule (``URLSessionTransport``'s time
    /// limit): `nil` for no deadline. An invalid timeout was refused before anything was sent.
    static func deadline(of request: URLRequest) -> ContinuousClock.Instant? {
        (try? HTTPTransportContext.timeLimit(of: request)).flatMap { $0 }.map { ContinuousClock.now + $0 }
    }
}

/// A provider's plugins and agent, made once with the provider and shared by every hop of every exchange of its
/// calls.
///
/// A hop of the interceptor chain is this reference, a position, the endpoint and the call state: making the next
/// hop retains three objects, where a hop holding the plugins and the agent itself (its transport and each reference
/// in its configuration) retained and released every one of them, per interceptor and per call.
final class ExchangeChain: Sendable {
    let plugins: [any NetworkAgentPlugin]
    let agent: NetworkAgent

    init(plugins: [any NetworkAgentPlugin], agent: NetworkAgent) {
        self.plugins = plugins
        self.agent = agent
    }

    /// ``NetworkAgent/prepare(_:)`` of the agent, called where the agent is held, so that it is not copied out
    /// (a copy retains its transport and each reference of its configuration).
    func prepare(_ request: URLRequest) throws(NetworkAgentError) -> URLRequest {
        try agent.prepare(request)
    }

    /// ``NetworkAgent/sendPrepared(_:for:)`` of the agent, called where the agent is held, like ``prepare(_:)``.
    func send(
        _ request: URLRequest,
        for endpoint: any NetworkAgentEndpoint
    ) async throws -> (data: Data, response: URLResponse) {
        try await agent.sendPrepared(request, for: endpoint)
    }
}

/// What one provider call shares across its exchange: the last request sent and, when streaming, the open body and
/// who waits for its end.
///
/// A struct around its locked state rather than a class holding it: the state's lock is the one allocation of the
/// call's identity (``isSame(as:)``), not a second object per call.
struct CallState: Sendable {
    let isStreaming: Bool

    private struct State {
        var sent: URLRequest?
        /// The body of the last 2xx streamed response.
        var body: HTTPByteStream?
        /// The observers of the end of the body the caller gets, until it is known.
        var observers: [@Sendable (HTTPStreamEnd) -> Void] = []
        /// The body handed to the caller, once it was; `nil` with `ended` when the call failed instead.
        var delivered: HTTPByteStream?
        var ended = false
    }

    private let state = Locked(State())

    init(isStreaming: Bool) {
        self.isStreaming = isStreaming
    }

    /// Whether `other` is this same call (a copy of this value), not another call's state.
    func isSame(as other: CallState) -> Bool {
        state === other.state
    }

    func recordSent(_ request: URLRequest) {
        state.withLock { $0.sent = request }
    }

    var lastSent: URLRequest? { state.withLock { $0.sent } }

    /// Keeps the body of a 2xx streamed response; an earlier one (an interceptor called `next` again) is dropped,
    /// which cancels its transfer.
    func keep(_ body: HTTPByteStream) {
        state.withLock { $0.body = body }
    }

    var body: HTTPByteStream? { state.withLock { $0.body } }

    /// See ``NetworkAgentExchange/onStreamEnd(_:)``.
    func onStreamEnd(_ observer: @escaping @Sendable (HTTPStreamEnd) -> Void) {
        guard isStreaming else { return }
        enum Action {
            case wait
            case attach(HTTPByteStream)
            case failed
        }
        let action = state.withLock { state -> Action in
            if let delivered = state.delivered { return .attach(delivered) }
            if state.ended { return .failed }
            state.observers.append(observer)
            return .wait
        }
        switch action {
        case .wait: break
        case .attach(let body): body.buffer.onEnd(observer)
        case .failed: observer(HTTPStreamEnd(outcome: .cancelled, bytes: 0))
        }
    }

    /// The call hands `body` to the caller: the observers now wait for its end.
    func deliver(_ body: HTTPByteStream) {
        let observers = state.withLock { state in
            state.delivered = body
            state.ended = true
            defer { state.observers = [] }
            return state.observers
        }
        for observer in observers { body.buffer.onEnd(observer) }
    }

    /// The call failed before handing a body to the caller: the body kept so far is cancelled (so that its
    /// connection closes now) and the observers are told.
    func fail() {
        let (body, observers) = state.withLock { state in
            state.ended = true
            defer {
                state.observers = []
                state.body = nil
            }
            return (state.body, state.observers)
        }
        body?.buffer.cancel()
        let end = HTTPStreamEnd(outcome: .cancelled, bytes: 0)
        for observer in observers { observer(end) }
    }
}
