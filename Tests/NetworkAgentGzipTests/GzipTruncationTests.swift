import Foundation
import NetworkAgent
import NetworkAgentGzip
import NetworkAgentTestServer
import NetworkAgentTestSupport
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A gzip response body cut short, through the gzip plugin, on the run's transport (`NETWORKAGENT_TEST_TRANSPORT`).
///
/// Cut short on the wire (fewer bytes than its `Content-Length`, or chunked without its last chunk), every transport
/// fails the call with a lost connection. A body that is complete on the wire but holds only part of a gzip stream is
/// caught only where the plugin sees the compressed bytes (`CurlTransport`); through `URLSessionTransport`, libcurl
/// inflates what there is and nothing tells the library the stream was incomplete: the call returns `200` with a
/// shorter body (Docs/Gzip.md, "Truncated bodies").
@Suite struct GzipTruncationTests {
    /// JSON long enough that half of its gzip stream inflates to a good part of it.
    static let payload = Data(
        ("[" + (0..<400).map { "{\"id\":\($0),\"name\":\"pokemon number \($0)\"}" }.joined(separator: ",") + "]").utf8
    )

    static func server() throws -> LoopbackServer {
        let compressed = try Deflater.compress(payload, format: .gzip)
        let half = compressed.prefix(compressed.count / 2)
        let headers = [("Content-Type", "application/json"), ("Content-Encoding", "gzip")]
        return try LoopbackServer { request in
            switch request.path {
            case "/closed-early":
                // The full compressed Content-Length, then half of it and a closed connection.
                return ServerResponse(
                    headers: headers,
                    body: .data(compressed),
                    fault: .closeMidBody(afterBytes: half.count)
                )
            case "/chunked-unfinished":
                return ServerResponse(
                    headers: headers,
                    body: .chunked([Data(half)], interval: .zero),
                    fault: .truncatedChunked
                )
            case "/framed-half-stream":
                // Well framed on the wire (its Content-Length is right); the gzip stream inside ends halfway.
                return ServerResponse(headers: headers, body: .data(Data(half)))
            case "/chunked-half-stream":
                return ServerResponse(headers: headers, body: .chunked([Data(half)], interval: .zero))
            default:
                return ServerResponse(headers: headers, body: .data(compressed))
            }
        }
    }

    static func call(_ server: LoopbackServer, _ path: String) async throws -> (Data, URLResponse) {
        let provider = NetworkAgentProvider<GzipEndpoint>(
            plugins: [.gzip()],
            agent: NetworkAgent(transport: TestTransport.make())
        )
        return try await provider.request(
            endpoint: GzipEndpoint(baseURL: server.baseURL, path: path, method: .get, headers: [:])
        )
    }

    @Test func theWholeBodyArrivesDecoded() async throws {
        let server = try Self.server()
        defer { server.stop() }
        let (data, response) = try await Self.call(server, "/whole")
        #expect(data == Self.payload)
        #expect((response as? HTTPURLResponse)?.value(forHTTPHeaderField: "Content-Encoding") == nil)
    }

    @Test(arguments: ["/closed-early", "/chunked-unfinished"])
    func aGzipBodyCutShortOnTheWireIsALostConnection(path: String) async throws {
        let server = try Self.server()
        defer { server.stop() }
        let error = await #expect(throws: NetworkAgentError.self, "\(path)") {
            try await Self.call(server, path)
        }
        #expect(error?.code == .transport, "\(path): \(String(describing: error))")
        #expect(error?.urlErrorCode == .networkConnectionLost, "\(path): \(String(describing: error))")
    }

    /// The documented limit of each transport for a gzip stream cut short inside a body that is whole on the wire.
    @Test(arguments: ["/framed-half-stream", "/chunked-half-stream"])
    func aGzipStreamCutShortInsideAWholeBody(path: String) async throws {
        let server = try Self.server()
        defer { server.stop() }
        let result: Result<(Data, URLResponse), any Error>
        do {
            result = .success(try await Self.call(server, path))
        } catch {
            result = .failure(error)
        }
        switch TestTransport.kind {
        case .urlSession:
            // libcurl inflated the half it had and reported no error: a short 200, a prefix of the payload.
            let (data, response) = try result.get()
            #expect((response as? HTTPURLResponse)?.statusCode == 200)
            #expect(!data.isEmpty && data.count < Self.payload.count, "\(data.count) bytes")
            #expect(Self.payload.starts(with: data))
        case .curl:
            // The plugin inflates the compressed bytes itself and finds the stream unfinished.
            #expect(throws: NetworkAgentError.self) { try result.get() }
            guard case .failure(let error as NetworkAgentError) = result else { return }
            #expect(error.code == .invalidResponse)
            #expect((error.underlying as? GzipPlugin.Error)?.code == .truncatedInput, "\(error)")
        }
    }
}
