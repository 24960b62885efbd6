import Foundation
import NetworkAgent
import NetworkAgentTestServer
import NetworkAgentTestSupport
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A body that ends before its framing says it would is a lost connection, `URLError(.networkConnectionLost)` inside a
/// `.transport` error, on every transport (`NETWORKAGENT_TEST_TRANSPORT`), buffered or streamed: the code the retry
/// plugin retries an idempotent request on. FoundationNetworking reports it as `URLError.unknown` (-1), which
/// `URLSessionTransport` maps.
@Suite struct BodyCutShortTests {
    static let cases: [(String, ServerResponse.Fault)] = [
        ("closed before its Content-Length", .closeMidBody(afterBytes: 10)),
        ("chunked without its last chunk", .truncatedChunked),
    ]

    static func server(_ fault: ServerResponse.Fault) throws -> LoopbackServer {
        try LoopbackServer { _ in
            ServerResponse(
                body: .chunked(
                    [Data(repeating: 0x61, count: 300), Data(repeating: 0x62, count: 300)],
                    interval: .zero
                ),
                fault: fault
            )
        }
    }

    @Test(arguments: cases)
    func aBufferedBodyCutShortIsALostConnection(name: String, fault: ServerResponse.Fault) async throws {
        let server = try Self.server(fault)
        defer { server.stop() }
        let agent = NetworkAgent(transport: TestTransport.make())
        let error = await #expect(throws: NetworkAgentError.self, "\(name)") {
            try await agent.request(TestEndpoint(baseURL: server.baseURL, path: "/cut", timeout: .seconds(10)))
        }
        #expect(error?.code == .transport, "\(name): \(String(describing: error))")
        #expect(error?.urlErrorCode == .networkConnectionLost, "\(name): \(String(describing: error))")
    }

    @Test(arguments: cases)
    func aStreamedBodyCutShortIsALostConnection(name: String, fault: ServerResponse.Fault) async throws {
        let server = try Self.server(fault)
        defer { server.stop() }
        let provider = NetworkAgentProvider<TestEndpoint>(
            plugins: [],
            agent: NetworkAgent(transport: TestTransport.make())
        )
        let stream = try await provider.stream(
            endpoint: TestEndpoint(baseURL: server.baseURL, path: "/cut", timeout: .seconds(10))
        )
        var read = 0
        let error = await #expect(throws: NetworkAgentError.self, "\(name)") {
            for try await chunk in stream.body { read += chunk.count }
        }
        #expect(read <= 600)
        #expect(error?.urlErrorCode == .networkConnectionLost, "\(name): \(String(describing: error))")
    }
}
