import Foundation
import NetworkAgent

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Sends requests for the offline mirror's stable origin (`http://pokeapi.mirror`) to wherever the mirror listens
/// on loopback this time, like a hosts-file entry.
///
/// The plugins above it — the disk cache above all — see the stable URL, in requests and responses alike (the cache
/// files a response under the URL it came from), so what `sync` caches is found again by a later `--offline` run,
/// whatever port the mirror had. Everything else passes through unchanged.
public struct MirrorRoutingTransport: HTTPTransport {
    /// The origin the example uses for its offline mirror.
    public static let mirrorOrigin = URL(string: "http://pokeapi.mirror")!

    /// The transport that really sends.
    public let base: any HTTPTransport
    /// Where the mirror listens, e.g. `http://127.0.0.1:41234`; `nil` when no mirror runs (`--offline`).
    public let mirror: URL?

    /// Creates a routing transport.
    public init(base: any HTTPTransport, mirror: URL?) {
        self.base = base
        self.mirror = mirror
    }

    /// Sends through ``base``, after pointing mirror requests at the mirror.
    public func send(_ request: URLRequest) async throws -> (data: Data, response: URLResponse) {
        let (data, response) = try await base.send(routed(request))
        return (data, (response as? HTTPURLResponse).map(unrouted) ?? response)
    }

    /// Streams through ``base``, after pointing mirror requests at the mirror.
    public func stream(_ request: URLRequest) async throws -> HTTPStreamResponse {
        let opened = try await base.stream(routed(request))
        return HTTPStreamResponse(response: unrouted(opened.response), body: opened.body)
    }

    /// A response from the mirror under the stable origin, as a hosts-file entry would leave it.
    private func unrouted(_ response: HTTPURLResponse) -> HTTPURLResponse {
        guard let mirror, let url = response.url, url.host == mirror.host, url.port == mirror.port,
            var components = URLComponents(url: url, resolvingAgainstBaseURL: false)
        else { return response }
        components.scheme = Self.mirrorOrigin.scheme
        components.host = Self.mirrorOrigin.host
        components.port = nil
        var headers: [String: String] = [:]
        for case (let name as String, let value) in response.allHeaderFields {
            headers[name] = value as? String ?? "\(value)"
        }
        guard let stable = components.url,
            let rebuilt = HTTPURLResponse(
                url: stable,
                statusCode: response.statusCode,
                httpVersion: "HTTP/1.1",
                headerFields: headers
            )
        else { return response }
        return rebuilt
    }

    private func routed(_ request: URLRequest) throws -> URLRequest {
        guard let url = request.url, url.host == Self.mirrorOrigin.host else { return request }
        guard let mirror, var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else {
            throw NetworkAgentError(
                .transport,
                "the offline mirror is not running",
                underlying: URLError(.cannotConnectToHost)
            )
        }
        components.scheme = mirror.scheme
        components.host = mirror.host
        components.port = mirror.port
        var routed = request
        routed.url = components.url
        return routed
    }
}
