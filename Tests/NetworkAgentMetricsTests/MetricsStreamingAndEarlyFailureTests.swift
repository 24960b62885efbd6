import Foundation
import NetworkAgent
import NetworkAgentMetrics
import NetworkAgentTestServer
import NetworkAgentTestSupport
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Streamed exchanges and calls that fail before the exchange, counted by the metrics plugin.
@Suite struct MetricsStreamingAndEarlyFailureTests {
    static let agent = NetworkAgent(transport: TestTransport.make())

    func labels(_ route: String, _ statusClass: String, _ outcome: String) -> [String: String] {
        ["route": route, "method": "GET", "status_class": statusClass, "outcome": outcome]
    }

    /// Throws in `onRequest`, as an auth plugin refusing an origin does.
    struct Refusing: NetworkAgentPlugin {
        struct Refused: Error {}

        func onRequest(_ request: URLRequest, endpoint: any NetworkAgentEndpoint) async throws -> URLRequest {
            throw Refused()
        }
    }

    /// A body the request builder cannot encode.
    struct NotEncodable: Sendable {}

    @Test("17.1 a streamed response counts the bytes the caller read")
    func streamedResponseCountsStreamedBytes() async throws {
        let chunks = Array(repeating: Data(repeating: 7, count: 1000), count: 5)
        let server = try LoopbackServer { _ in ServerResponse(body: .chunked(chunks, interval: .milliseconds(10))) }
        defer { server.stop() }
        let registry = MetricsRegistry()
        let provider = NetworkAgentProvider<LoadApi>(plugins: [.metrics(registry)], agent: Self.agent)
        let stream = try await provider.stream(endpoint: .fast(base: server.baseURL, id: 1))
        var total = 0
        for try await chunk in stream.body { total += chunk.count }
        #expect(total == 5000)
        let snapshot = registry.snapshot()
        #expect(snapshot.value("networkagent_requests_total", labels("fast", "2xx", "success")) == 1)
        #expect(snapshot.total("networkagent_requests_total") == 1)
        let received = try #require(
            snapshot.histogram("networkagent_response_body_bytes", ["route": "fast", "method": "GET"])
        )
        #expect(received.count == 1)
        #expect(received.sum == 5000)
        #expect(registry.inFlight == 0)
    }

    @Test("17.1 a stream that fails mid-body counts as a failure with the bytes read")
    func streamFailingMidBodyCountsAFailure() async throws {
        let body = Data(repeating: 1, count: 1000)
        let server = try LoopbackServer { _ in ServerResponse(body: .data(body), fault: .closeMidBody(afterBytes: 100))
        }
        defer { server.stop() }
        let registry = MetricsRegistry()
        let provider = NetworkAgentProvider<LoadApi>(plugins: [.metrics(registry)], agent: Self.agent)
        let stream = try await provider.stream(endpoint: .fast(base: server.baseURL, id: 1))
        var total = 0
        await #expect(throws: NetworkAgentError.self) {
            for try await chunk in stream.body { total += chunk.count }
        }
        let snapshot = registry.snapshot()
        #expect(snapshot.total("networkagent_requests_total") == 1)
        #expect(snapshot.value("networkagent_requests_total", labels("fast", "2xx", "success")) == nil)
        let samples = snapshot.family("networkagent_requests_total")?.samples ?? []
        #expect(samples.count == 1)
        #expect(samples.first?.labels["outcome"]?.hasPrefix("transport_error") == true)
        let received = try #require(
            snapshot.histogram("networkagent_response_body_bytes", ["route": "fast", "method": "GET"])
        )
        // The 100 bytes sent before the connection closed were read, and counted.
        #expect(total == 100)
        #expect(received.count == 1)
        #expect(received.sum == 100)
        #expect(registry.inFlight == 0)
    }

    @Test("17.17 a call failing in another plugin's onRequest is counted once as failed")
    func callFailingInOnRequestIsCounted() async throws {
        let server = try LoopbackServer { _ in .text("never") }
        defer { server.stop() }
        let registry = MetricsRegistry()
        let provider = NetworkAgentProvider<LoadApi>(plugins: [.metrics(registry), Refusing()], agent: Self.agent)
        await #expect(throws: Refusing.Refused.self) {
            try await provider.request(endpoint: .fast(base: server.baseURL, id: 1))
        }
        let snapshot = registry.snapshot()
        #expect(snapshot.value("networkagent_requests_total", labels("fast", "none", "error:other")) == 1)
        #expect(snapshot.total("networkagent_requests_total") == 1)
        #expect(registry.inFlight == 0)
        #expect(server.requestCount == 0)
    }

    @Test("17.17 a call whose request cannot be built is counted once as failed")
    func unbuildableRequestIsCounted() async throws {
        let registry = MetricsRegistry()
        let provider = NetworkAgentProvider<PlainEndpoint>(plugins: [.metrics(registry)], agent: Self.agent)
        let endpoint = PlainEndpoint(
            baseURL: try #require(URL(string: "http://127.0.0.1:1")),
            path: "/x",
            task: .requestWithoutAttributes(content: NotEncodable())
        )
        let error = await #expect(throws: NetworkAgentError.self) { try await provider.request(endpoint: endpoint) }
        let code = try #require(error?.code)
        let snapshot = registry.snapshot()
        let outcome = "error:\(code)"
        #expect(
            snapshot.value(
                "networkagent_requests_total",
                ["route": "PlainEndpoint", "method": "GET", "status_class": "none", "outcome": outcome]
            ) == 1
        )
        #expect(snapshot.total("networkagent_requests_total") == 1)
        #expect(registry.inFlight == 0)
    }
}
