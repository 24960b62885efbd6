import Foundation
import NetworkAgent
import NetworkAgentGzip
import NetworkAgentTestServer
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// How URLSessionTransport's response limit stops a bomb that libcurl inflates inside FoundationNetworking, before
/// the plugin sees a byte: on URLSessionTransport in every run. (CurlTransport hands the compressed bytes to the
/// plugin, whose own limits stop the bomb; its tests cover that.)
@Suite("Gzip bombs on the URLSession transport")
struct GzipTransportLimitTests {
    /// 64 MiB of zeros, gzip-compressed to about 64 KiB; libcurl inflates it before any plugin sees a byte.
    static func bombServer() throws -> LoopbackServer {
        let bomb = try Deflater.compress(Data(count: 64 << 20), level: 9)
        return try LoopbackServer { _ in
            ServerResponse(
                headers: [("Content-Type", "application/json"), ("Content-Encoding", "gzip")],
                body: .data(bomb)
            )
        }
    }

    static func provider(limit: Int) -> NetworkAgentProvider<GzipEndpoint> {
        NetworkAgentProvider<GzipEndpoint>(
            plugins: [.gzip()],
            agent: NetworkAgent(
                transport: URLSessionTransport(),
                configuration: NetworkAgentConfiguration(maximumResponseBytes: limit)
            )
        )
    }

    @Test("17.12 a gzip bomb that libcurl inflates is stopped by maximumResponseBytes")
    func gzipBombIsStoppedByTheAgentLimit() async throws {
        let server = try Self.bombServer()
        let limit = 1 << 20
        let seen = Locked(0)
        let error = await #expect(throws: NetworkAgentError.self) {
            _ = try await Self.provider(limit: limit).request(
                endpoint: GzipEndpoint(baseURL: server.baseURL, method: .get),
                progress: { progress in seen.withLock { $0 = max($0, progress.bytesReceived) } }
            )
        }
        #expect(error?.code == .responseTooLarge)
        #expect(seen.withLock { $0 } <= limit)
    }

    @Test("17.12 a streamed gzip bomb fails with responseTooLarge")
    func streamedGzipBombIsStopped() async throws {
        let server = try Self.bombServer()
        let limit = 1 << 20
        let received = Locked(0)
        let error = await #expect(throws: NetworkAgentError.self) {
            let stream = try await Self.provider(limit: limit).stream(
                endpoint: GzipEndpoint(baseURL: server.baseURL, method: .get)
            )
            for try await chunk in stream.body { received.withLock { $0 += chunk.count } }
        }
        #expect(error?.code == .responseTooLarge)
        #expect(received.withLock { $0 } <= limit)
    }
}
