import Foundation
import NetworkAgent

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A plugin that emits one event inside every exchange, as a retry or cache plugin would, then passes the call on.
public struct EventEmitter: NetworkAgentPlugin {
    /// The event emitted once per request.
    public let event: NetworkAgentEvent

    /// Creates the plugin.
    ///
    /// - Parameter event: The event to emit once per request.
    public init(event: NetworkAgentEvent) {
        self.event = event
    }

    /// Emits ``event``, then sends the request on.
    public func intercept(
        _ request: URLRequest,
        endpoint: any NetworkAgentEndpoint,
        next: NetworkAgentExchange
    ) async throws -> (data: Data, response: URLResponse) {
        NetworkAgentEvents.emit(event)
        return try await next(request)
    }
}
