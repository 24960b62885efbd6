import Foundation
import NetworkAgent
import NetworkAgentLogging
import NetworkAgentTestServer
import NetworkAgentTestSupport
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The logging plugin on streamed exchanges.
@Suite struct LoggingStreamTests {
    let agent = NetworkAgent(transport: TestTransport.make())

    @Test("17.1 a streamed response is logged with the bytes streamed when it ends")
    func streamEndIsLoggedWithItsByteCount() async throws {
        let chunks = Array(repeating: Data(repeating: 0x61, count: 1000), count: 5)
        let server = try LoopbackServer { _ in ServerResponse(body: .chunked(chunks, interval: .milliseconds(10))) }
        defer { server.stop() }
        let collector = RecordCollector()
        let provider = NetworkAgentProvider<TestEndpoint>(plugins: [.logging(sink: collector.sink)], agent: agent)
        let stream = try await provider.stream(endpoint: TestEndpoint(baseURL: server.baseURL, path: "/events"))
        var total = 0
        for try await chunk in stream.body { total += chunk.count }
        #expect(total == 5000)
        // No record claims the streamed body was empty; one record, the last, tells the bytes streamed.
        #expect(!collector.records.contains { $0.metadata["response_bytes"] == "0" })
        let last = try #require(collector.records.last)
        #expect(last.kind.rawValue == "stream_end")
        #expect(last.metadata["response_bytes"] == "5000")
        #expect(last.message.contains("5000"))
    }

    @Test("17.1 a stream failing mid-body is logged as a failure with the bytes read")
    func streamFailureIsLoggedWithItsByteCount() async throws {
        let body = Data(repeating: 0x61, count: 1000)
        let server = try LoopbackServer { _ in ServerResponse(body: .data(body), fault: .closeMidBody(afterBytes: 100))
        }
        defer { server.stop() }
        let collector = RecordCollector()
        let provider = NetworkAgentProvider<TestEndpoint>(plugins: [.logging(sink: collector.sink)], agent: agent)
        let stream = try await provider.stream(endpoint: TestEndpoint(baseURL: server.baseURL, path: "/events"))
        var total = 0
        await #expect(throws: NetworkAgentError.self) {
            for try await chunk in stream.body { total += chunk.count }
        }
        // The 100 bytes sent before the connection closed were read, and logged.
        #expect(total == 100)
        let last = try #require(collector.records.last)
        #expect(last.kind.rawValue == "stream_end")
        #expect(last.severity == .error)
        #expect(last.metadata["response_bytes"] == "100")
        #expect(last.metadata["error"] != nil)
    }
}
