import Foundation
import NetworkAgent
import NetworkAgentMetrics
import NetworkAgentTestServer
import NetworkAgentTestSupport
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A buffered request on the loopback server, named for the metrics route `HeadersThenFailure`.
private struct HeadersThenFailure: NetworkAgentEndpoint {
    var baseURL: URL
    var path: String
    var method = HTTPMethod.get
    var task = HTTPTask.requestPlain
    var timeout: Duration? = .seconds(10)
}

/// Time to headers is reported once per exchange that received headers, also when its body then fails: on the run's
/// transport (`NETWORKAGENT_TEST_TRANSPORT`), over the wire.
@Suite struct MetricsHeadersBeforeFailureTests {
    /// The server waits this long before its head, so that the time to headers has a floor the test knows.
    static let headDelay = Duration.milliseconds(60)

    static func server() throws -> LoopbackServer {
        try LoopbackServer { request in
            switch request.path {
            case "/moved":
                return ServerResponse(status: 302, headers: [("Location", "/broken")], delay: headDelay)
            case "/truncated-chunked":
                return ServerResponse(
                    body: .chunked([Data(repeating: 0x61, count: 500)], interval: .zero),
                    delay: headDelay,
                    fault: .truncatedChunked
                )
            default:
                // The full Content-Length in the head, then 10 of its 1000 bytes and a closed connection.
                return ServerResponse(
                    body: .data(Data(repeating: 0x61, count: 1000)),
                    delay: headDelay,
                    fault: .closeMidBody(afterBytes: 10)
                )
            }
        }
    }

    /// Runs one call that must fail after its headers, and returns the time-to-headers histogram of its route.
    func headersOfFailedCall(_ path: String) async throws -> MetricsSnapshot.Histogram? {
        let server = try Self.server()
        defer { server.stop() }
        let registry = MetricsRegistry()
        let provider = NetworkAgentProvider<HeadersThenFailure>(
            plugins: [.metrics(registry)],
            agent: NetworkAgent(transport: TestTransport.make())
        )
        let error = await #expect(throws: NetworkAgentError.self) {
            try await provider.request(endpoint: HeadersThenFailure(baseURL: server.baseURL, path: path))
        }
        #expect(error?.code == .transport, "\(String(describing: error))")
        let snapshot = registry.snapshot()
        #expect(snapshot.total("networkagent_requests_total") == 1)
        return snapshot.histogram(
            "networkagent_response_headers_seconds",
            ["route": "HeadersThenFailure", "method": "GET"]
        )
    }

    @Test func aBodyCutShortAfterItsHeadersStillHasATimeToHeaders() async throws {
        let headers = try #require(try await headersOfFailedCall("/broken"), "no time to headers was recorded")
        #expect(headers.count == 1)
        #expect(headers.sum >= Self.headDelay.timeInterval, "\(headers.sum) s is before the head was sent")
    }

    @Test func aChunkedBodyWithoutItsLastChunkStillHasATimeToHeaders() async throws {
        let headers = try #require(
            try await headersOfFailedCall("/truncated-chunked"),
            "no time to headers was recorded"
        )
        #expect(headers.count == 1)
        #expect(headers.sum >= Self.headDelay.timeInterval)
    }

    @Test func aRedirectToABrokenBodyCountsBothHops() async throws {
        let headers = try #require(try await headersOfFailedCall("/moved"), "no time to headers was recorded")
        #expect(headers.count == 2)
        #expect(headers.sum >= 2 * Self.headDelay.timeInterval)
    }
}
