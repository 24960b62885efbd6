import Foundation
import NetworkAgent
import NetworkAgentGzip
import NetworkAgentTestServer
import NetworkAgentTestSupport
import NetworkAgentTesting
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The response the gzip plugin rewrites keeps the transport's per-phase timings, so an outer metrics plugin
/// still records them.
@Suite struct GzipTransferTimingsTests {
    @Test func theInflatedResponseKeepsTheTransportsTimings() async throws {
        let original = Data(String(repeating: "{\"name\":\"pikachu\"}", count: 100).utf8)
        let timings = HTTPTransferTimings(nameLookup: .microseconds(5), firstByte: .milliseconds(2))
        let transport = TimedTransport(
            timings: timings,
            headers: ["Content-Encoding": "gzip"],
            body: try Deflater.compress(original, format: .gzip)
        )
        let provider = NetworkAgentProvider<GzipEndpoint>(plugins: [.gzip()], agent: NetworkAgent(transport: transport))
        let (data, response) = try await provider.request(
            endpoint: GzipEndpoint(baseURL: try #require(URL(string: "http://stub.test")), method: .get)
        )
        #expect(data == original)
        let http = try #require(response as? HTTPURLResponse)
        #expect(http.value(forHTTPHeaderField: "Content-Encoding") == nil)
        #expect(http.transferTimings == timings)
    }
}

/// Over the wire: the response the plugin inflates keeps the timings CurlTransport measured for that transfer.
@Suite struct GzipTransferTimingsOverTheWireTests {
    @Test(.enabled(if: TestTransport.kind == .curl, "URLSessionTransport measures no transfer timings on Linux"))
    func theInflatedResponseKeepsCurlTransportsTimings() async throws {
        let original = Data(String(repeating: "{\"name\":\"pikachu\"}", count: 100).utf8)
        let compressed = try Deflater.compress(original, format: .gzip)
        // The server waits 200 ms before answering: the first byte of the real transfer came after that.
        let delay = Duration.milliseconds(200)
        let server = try LoopbackServer { _ in
            ServerResponse(
                headers: [("Content-Type", "application/json"), ("Content-Encoding", "gzip")],
                body: .data(compressed),
                delay: delay
            )
        }
        defer { server.stop() }
        let provider = NetworkAgentProvider<GzipEndpoint>(
            plugins: [.gzip()],
            agent: NetworkAgent(transport: TestTransport.make())
        )
        let (data, response) = try await provider.request(endpoint: GzipEndpoint(baseURL: server.baseURL, method: .get))
        #expect(data == original)
        let http = try #require(response as? HTTPURLResponse)
        #expect(http.value(forHTTPHeaderField: "Content-Encoding") == nil)
        let timings = try #require(http.transferTimings, "the inflated response lost the transfer's timings")
        let firstByte = try #require(timings.firstByte)
        let total = try #require(timings.total)
        #expect(firstByte >= delay, "first byte after \(firstByte), before the server's \(delay) delay")
        #expect(firstByte <= total)
        #expect(timings.connect != nil)
    }
}

/// A streamed body goes straight to the caller, past the plugin: the plugin must not invite the server to compress
/// it (with a transport that does not decode, the caller would get gzip bytes it never asked for).
@Suite struct GzipStreamedAcceptEncodingTests {
    @Test func onlyBufferedCallsAdvertiseGzipOnATransportThatDoesNotDecode() async throws {
        let stub = StubTransport(fallback: .json(Data("{}".utf8)))
        let provider = NetworkAgentProvider<GzipEndpoint>(plugins: [.gzip()], agent: NetworkAgent(transport: stub))
        let endpoint = GzipEndpoint(baseURL: try #require(URL(string: "http://stub.test")), method: .get)
        _ = try await provider.request(endpoint: endpoint)
        let stream = try await provider.stream(endpoint: endpoint)
        for try await _ in stream.body {}
        let sent = stub.requests.map { $0.value(forHTTPHeaderField: "Accept-Encoding") }
        #expect(sent == [GzipPlugin.acceptEncoding, nil])
    }
}
