import Foundation
import NetworkAgent
import NetworkAgentTestServer

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Sends the requests the proxy receives to the origin through a provider, and turns the answers back into what the
/// loopback server sends.
struct Forwarder: Sendable {
    /// Request fields not passed on: hop-by-hop fields (RFC 9110 §7.6.1) and those the transport sets itself.
    static let requestFieldsNotForwarded: Set<String> = [
        "host", "connection", "keep-alive", "proxy-connection", "te", "upgrade", "transfer-encoding",
        "content-length", "expect",
    ]
    /// Response fields not passed on: hop-by-hop fields, and the framing the loopback server sets itself.
    static let responseFieldsNotForwarded: Set<String> = [
        "connection", "keep-alive", "proxy-connection", "transfer-encoding", "content-length", "upgrade",
    ]

    /// The origin's base URL, without a trailing slash.
    let origin: String
    /// The provider whose chain holds the cache.
    let provider: NetworkAgentProvider<ForwardedRequest>

    /// The request to send to the origin for a received one, or `nil` when its target makes no URL.
    func forwarded(_ incoming: ServerRequest) -> URLRequest? {
        guard let url = URL(string: origin + incoming.target) else { return nil }
        var request = URLRequest(url: url)
        request.httpMethod = incoming.method
        for (name, value) in incoming.headers where !Self.requestFieldsNotForwarded.contains(name.lowercased()) {
            request.addValue(value, forHTTPHeaderField: name)
        }
        if !incoming.body.isEmpty { request.httpBody = incoming.body }
        return request
    }

    /// The answer, from the origin or the cache, as the loopback server sends it; 502 when the exchange failed.
    func answer(_ incoming: ServerRequest) async -> ServerResponse {
        guard let request = forwarded(incoming) else { return .text("bad request target", status: 400) }
        do {
            let (data, response) = try await provider.request(endpoint: ForwardedRequest(request: request))
            guard let http = response as? HTTPURLResponse else { return .text("not HTTP", status: 502) }
            var headers: [(name: String, value: String)] = []
            for (name, value) in http.allHeaderFields {
                guard let name = name as? String, !Self.responseFieldsNotForwarded.contains(name.lowercased()) else {
                    continue
                }
                headers.append((name, value as? String ?? "\(value)"))
            }
            return ServerResponse(status: http.statusCode, headers: headers, body: .data(data))
        } catch {
            return .text("proxy: \(error)", status: 502)
        }
    }

    /// The answer, waited for on the calling thread: the loopback server's handler is synchronous and runs on the
    /// connection's own thread.
    func blockingAnswer(_ incoming: ServerRequest) -> ServerResponse {
        let result = Locked<ServerResponse?>(nil)
        let done = DispatchSemaphore(value: 0)
        Task {
            let response = await answer(incoming)
            result.withLock { $0 = response }
            done.signal()
        }
        done.wait()
        return result.withLock { $0 } ?? .text("proxy: no answer", status: 502)
    }
}
