import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A `Sendable`, async interceptor in a provider's plugin chain.
///
/// Every hook has a pass-through default, so a plugin implements only what it needs. For one call of
/// ``NetworkAgentProvider/request(endpoint:progress:)``:
///
/// 1. ``onRequest(_:endpoint:)`` runs for every plugin in registration order, each seeing the previous output.
///    A throw ends the call before anything is sent; so does an endpoint whose request cannot be built. Either
///    way every plugin's ``onFailureBeforeExchange(_:endpoint:)`` is then told, in registration order, and the
///    error is thrown to the caller.
/// 2. ``intercept(_:endpoint:next:)`` wraps the network exchange, first-registered outermost: a plugin may
///    answer without calling `next` (a cache), call it several times (a retry), time it, or catch its errors.
/// 3. ``onResponse(_:data:request:endpoint:agent:)`` runs for every plugin in registration order on the
///    response; `request` is the final request that was actually sent. A throw fails the call.
///
/// Implementations must be thread-safe: one plugin value serves many concurrent calls.
public protocol NetworkAgentPlugin: Sendable {
    /// Inspects or changes the outgoing request.
    ///
    /// The provider hands the request over (`consuming`) and keeps no reference to it during the call. A plugin may
    /// declare its parameter `consuming` too and change it in place: then the change needs no copy of the request
    /// (Foundation copies a `URLRequest`'s storage on the first change while anyone else still holds it). Declaring it
    /// without the modifier, `func onRequest(_ request: URLRequest, endpoint: any NetworkAgentEndpoint)`, also
    /// implements this requirement; `var request = request` then changes a copy, as before.
    ///
    /// - Parameters:
    ///   - request: The request as built from the endpoint and changed by the plugins before this one.
    ///   - endpoint: The endpoint the call was made with.
    /// - Returns: The request handed to the next plugin.
    /// - Throws: Any error, which fails the call without touching the network.
    func onRequest(_ request: consuming URLRequest, endpoint: any NetworkAgentEndpoint) async throws -> URLRequest

    /// Wraps the network exchange of a call.
    ///
    /// The default calls `next(request)`. Plugins registered earlier wrap those registered later; the innermost
    /// `next` is the agent's transport.
    ///
    /// - Parameters:
    ///   - request: The final request of the `onRequest` phase (or as changed by outer interceptors).
    ///   - endpoint: The endpoint the call was made with.
    ///   - next: The rest of the exchange; call it zero, one or several times.
    /// - Returns: The body and response handed outwards and then to the `onResponse` phase.
    /// - Throws: Any error, which fails the call (outer interceptors see it first).
    func intercept(
        _ request: URLRequest,
        endpoint: any NetworkAgentEndpoint,
        next: NetworkAgentExchange
    ) async throws -> (data: Data, response: URLResponse)

    /// Inspects or changes the response.
    ///
    /// - Parameters:
    ///   - response: The response so far (from the network, a cache, or an earlier plugin).
    ///   - data: The body so far.
    ///   - request: The final request actually sent to the transport (the last one, if an interceptor sent
    ///     several), or the request of the `onRequest` phase when nothing was sent.
    ///   - endpoint: The endpoint the call was made with.
    ///   - agent: An agent for side requests, which do not re-run the plugin chain.
    /// - Returns: The body and response handed to the next plugin and finally to the caller.
    /// - Throws: Any error, which fails the call.
    func onResponse(
        _ response: URLResponse,
        data: Data,
        request: URLRequest,
        endpoint: any NetworkAgentEndpoint,
        agent: NetworkAgent
    ) async throws -> (data: Data, response: URLResponse)

    /// Learns that the call failed before its exchange started: the endpoint's request could not be built, or a
    /// plugin's ``onRequest(_:endpoint:)`` threw.
    ///
    /// The provider tells every plugin, in registration order (the one that threw and those whose `onRequest` never
    /// ran included), then throws `error` to the caller; neither ``intercept(_:endpoint:next:)`` nor
    /// ``onResponse(_:data:request:endpoint:agent:)`` runs for that call. It is meant for plugins that count calls,
    /// so that every call ends as exactly one outcome; it cannot change the error. The default does nothing.
    ///
    /// - Parameters:
    ///   - error: What failed the call.
    ///   - endpoint: The endpoint the call was made with.
    func onFailureBeforeExchange(_ error: any Error, endpoint: any NetworkAgentEndpoint) async
}

extension NetworkAgentPlugin {
    /// Returns `request` unchanged.
    ///
    /// - Parameters:
    ///   - request: The request so far.
    ///   - endpoint: The endpoint the call was made with.
    /// - Returns: `request`.
    /// - Throws: Never; a plugin's own implementation may.
    public func onRequest(
        _ request: consuming URLRequest,
        endpoint: any NetworkAgentEndpoint
    ) async throws -> URLRequest {
        request
    }

    /// Calls `next(request)`.
    ///
    /// - Parameters:
    ///   - request: The request of the `onRequest` phase.
    ///   - endpoint: The endpoint the call was made with.
    ///   - next: The rest of the exchange.
    /// - Returns: What `next` returns.
    /// - Throws: What `next` throws.
    public func intercept(
        _ request: URLRequest,
        endpoint: any NetworkAgentEndpoint,
        next: NetworkAgentExchange
    ) async throws -> (data: Data, response: URLResponse) {
        try await next(request)
    }

    /// Returns the response unchanged.
    ///
    /// - Parameters:
    ///   - response: The response so far.
    ///   - data: The body so far.
    ///   - request: The final request sent.
    ///   - endpoint: The endpoint the call was made with.
    ///   - agent: An agent for side requests.
    /// - Returns: `data` and `response`.
    /// - Throws: Never; a plugin's own implementation may.
    public func onResponse(
        _ response: URLResponse,
        data: Data,
        request: URLRequest,
        endpoint: any NetworkAgentEndpoint,
        agent: NetworkAgent
    ) async throws -> (data: Data, response: URLResponse) {
        (data: data, response: response)
    }

    /// Does nothing.
    ///
    /// - Parameters:
    ///   - error: What failed the call.
    ///   - endpoint: The endpoint the call was made with.
    public func onFailureBeforeExchange(_ error: any Error, endpoint: any NetworkAgentEndpoint) async {}
}
