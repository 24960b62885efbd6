import Foundation
import NetworkAgent
import NetworkAgentLogging
import NetworkAgentTestServer
import NetworkAgentTestSupport
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A sink with a minimum severity gets exactly the records of the full sink at or above it (issue 29: the records it
/// would drop are never built, so the filter must not change which records it sees).
@Suite struct LogSinkSeverityTests {
    let agent = TestTransport.agent(configuration: NetworkAgentConfiguration(userAgent: "test-agent"))

    /// The records of one call through `.logging(sink:)` with a collector of the given minimum severity, and with a
    /// collector that keeps everything beside it in the same provider.
    func records(
        minimum: LogRecord.Severity,
        endpoint: TestEndpoint
    ) async -> (kept: [LogRecord], all: [LogRecord]) {
        let kept = Locked<[LogRecord]>([])
        let all = Locked<[LogRecord]>([])
        let provider = NetworkAgentProvider<TestEndpoint>(
            plugins: [
                .logging(sink: LogSink { record in all.withLock { $0.append(record) } }),
                .logging(sink: LogSink(minimumSeverity: minimum) { record in kept.withLock { $0.append(record) } }),
            ],
            agent: agent
        )
        _ = try? await provider.request(endpoint: endpoint)
        return (kept.withLock { $0 }, all.withLock { $0 })
    }

    @Test(arguments: [LogRecord.Severity.debug, .info, .error])
    func aSuccessfulCallKeepsTheRecordsAtOrAboveTheMinimum(minimum: LogRecord.Severity) async throws {
        let server = try LoopbackServer { _ in .text("ok") }
        let (kept, all) = await records(minimum: minimum, endpoint: TestEndpoint(baseURL: server.baseURL))
        #expect(all.map(\.kind) == [.request, .event, .response])
        let expected = all.filter { $0.severity >= minimum }
        #expect(kept.map(\.kind) == expected.map(\.kind))
        #expect(kept.map(\.message.normalizingDurations) == expected.map(\.message.normalizingDurations))
        #expect(kept.map { $0.metadata["url"] } == expected.map { $0.metadata["url"] })
    }

    @Test func anErrorsOnlySinkStillGetsTheFailure() async throws {
        let probe = try LoopbackServer { _ in .text("") }
        let base = probe.baseURL
        probe.stop()
        let endpoint = TestEndpoint(
            baseURL: base,
            path: "/x",
            task: .requestAttributes(attributes: ["token": "sekrit"], encoding: .url)
        )
        let (kept, all) = await records(minimum: .error, endpoint: endpoint)
        #expect(kept.map(\.kind) == [.failure])
        let failure = try #require(kept.first)
        #expect(failure.severity == .error)
        #expect(failure.message.hasPrefix("<-- FAILED GET \(base.absoluteString)/x?token=<redacted> ("))
        #expect(failure.metadata["call_id"] != nil)
        #expect(all.filter { $0.kind == .failure }.map { $0.metadata["error"] } == [failure.metadata["error"]])
    }

    @Test func aSinkMadeFromAClosureKeepsEverySeverity() {
        #expect(LogSink { _ in }.minimumSeverity == .debug)
        #expect(LogSink(minimumSeverity: .info) { _ in }.minimumSeverity == .info)
    }
}
