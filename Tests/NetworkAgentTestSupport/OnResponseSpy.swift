import Foundation
import NetworkAgent

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A plugin that keeps the request its `onResponse` last saw: the request that was finally sent, after every
/// `intercept` (a retry's key, a rewriter's header).
public final class OnResponseSpy: NetworkAgentPlugin {
    private let seen = Locked<URLRequest?>(nil)

    /// The request `onResponse` last saw, `nil` before the first response.
    public var lastRequest: URLRequest? { seen.withLock { $0 } }

    /// Creates the plugin.
    public init() {}

    /// Keeps `request` and passes the response on unchanged.
    public func onResponse(
        _ response: URLResponse,
        data: Data,
        request: URLRequest,
        endpoint: any NetworkAgentEndpoint,
        agent: NetworkAgent
    ) async throws -> (data: Data, response: URLResponse) {
        seen.withLock { $0 = request }
        return (data: data, response: response)
    }
}
