import Foundation
import NetworkAgent

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A request the proxy received, as an endpoint: the provider builds a placeholder request from it, and
/// ``ForwardingPlugin`` puts the received one in its place before the cache sees it.
struct ForwardedRequest: NetworkAgentEndpoint {
    /// The request to send to the origin, with the received method, header fields and body.
    let request: URLRequest

    var baseURL: URL { request.url ?? URL(fileURLWithPath: "/") }
    var path: String { "" }
    var method: HTTPMethod { .get }
    var task: HTTPTask { .requestPlain }
    /// A proxy forwards whatever the origin sends.
    var maximumResponseBytes: Int? { Int.max }
}

/// Replaces the request built from a ``ForwardedRequest`` with the request the proxy received (method, header
/// fields and body exactly as received, minus hop-by-hop fields).
struct ForwardingPlugin: NetworkAgentPlugin {
    func onRequest(_ request: URLRequest, endpoint: any NetworkAgentEndpoint) async throws -> URLRequest {
        (endpoint as? ForwardedRequest)?.request ?? request
    }
}
