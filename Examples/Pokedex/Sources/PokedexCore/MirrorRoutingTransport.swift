import Foundation
import NetworkAgent

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Sends requests for the offline mirror's stable origin (`http://pokeapi.mirror`) to wherever the mirror listens
/// on loopback this time, like a hosts-file entry — and, like one, keeps that origin in what comes back: response
/// URLs and error messages name `http://pokeapi.mirror`, never `127.0.0.1` and this run's port.
///
/// The plugins above it — the disk cache above all — see the stable URL, so what `sync` caches is found again by a
/// later `--offline` run, whatever port the mirror had, and `--verbose` names one host throughout. Everything else
/// passes through unchanged.
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
        let routed = try routed(request)
        do {
            let (data, response) = try await base.send(routed)
            return (data, presented(response))
        } catch let error as NetworkAgentError {
            throw presented(error)
        }
    }

    /// Streams through ``base``, after pointing mirror requests at the mirror.
    public func stream(_ request: URLRequest) async throws -> HTTPStreamResponse {
        let routed = try routed(request)
        do {
            let streamed = try await base.stream(routed)
            return HTTPStreamResponse(response: presented(streamed.response), body: streamed.body)
        } catch let error as NetworkAgentError {
            throw presented(error)
        }
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

    /// `http://127.0.0.1:<port>` of the running mirror, as URLs and messages spell it.
    private var mirrorText: String? {
        guard let mirror, let host = mirror.host else { return nil }
        return "\(mirror.scheme ?? "http")://\(host)\(mirror.port.map { ":\($0)" } ?? "")"
    }

    /// A URL of the mirror's loopback address as the stable origin; any other URL unchanged.
    private func presented(_ url: URL) -> URL {
        guard let mirror, url.host == mirror.host, url.port == mirror.port,
            var components = URLComponents(url: url, resolvingAgainstBaseURL: false)
        else { return url }
        components.scheme = Self.mirrorOrigin.scheme
        components.host = Self.mirrorOrigin.host
        components.port = Self.mirrorOrigin.port
        return components.url ?? url
    }

    /// The response with its URL presented under the stable origin (status and headers as they came).
    private func presented(_ response: URLResponse) -> URLResponse {
        guard let http = response as? HTTPURLResponse else { return response }
        return presented(http)
    }

    private func presented(_ response: HTTPURLResponse) -> HTTPURLResponse {
        guard let url = response.url else { return response }
        let shown = presented(url)
        guard shown != url else { return response }
        var fields: [String: String] = [:]
        for case (let name as String, let value as String) in response.allHeaderFields { fields[name] = value }
        return HTTPURLResponse(
            url: shown,
            statusCode: response.statusCode,
            httpVersion: "HTTP/1.1",
            headerFields: fields
        )
            ?? response
    }

    /// The error with the mirror's loopback address in its message and response presented under the stable origin.
    private func presented(_ error: NetworkAgentError) -> NetworkAgentError {
        guard let mirrorText else { return error }
        return NetworkAgentError(
            error.code,
            error.message.replacingOccurrences(of: mirrorText, with: Self.mirrorOrigin.absoluteString),
            underlying: error.underlying,
            response: error.response.map(presented),
            data: error.data
        )
    }
}
