import Foundation
import NetworkAgent
import NetworkAgentRetry
import NetworkAgentTestServer
import NetworkAgentTestSupport
import NetworkAgentTesting
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Cancelling the caller's task ends the retries at once, with the real clock and the real transport.
@Suite struct RetryCancellationTests {
    @Test func cancellingDuringTheBackoffSleepReturnsPromptlyAndSendsNothingMore() async throws {
        let server = try LoopbackServer { _ in .text("busy", status: 503) }
        defer { server.stop() }
        // A minute of backoff with the real clock: only cancellation can end it in time.
        let policy = RetryPlugin.Policy(
            baseDelay: .seconds(60),
            maximumDelay: .seconds(120),
            jitter: .none,
            timeBudget: nil
        )
        let provider = NetworkAgentProvider<RetryEndpoint>(
            plugins: [.retry(policy)],
            agent: NetworkAgent(transport: TestTransport.make())
        )
        let (scheduled, signal) = AsyncStream.makeStream(of: NetworkAgentEvent.self)
        let endpoint = RetryEndpoint(baseURL: server.baseURL)
        let call = Task {
            defer { signal.finish() }  // so that the wait below ends even if no retry is scheduled
            return try await NetworkAgentEvents.observing({ event in
                if event.name == "retry_scheduled" { signal.yield(event) }
            }) {
                try await provider.request(endpoint: endpoint)
            }
        }
        var events = scheduled.makeAsyncIterator()
        let event = await events.next()
        #expect(event?.attributes["delay_ms"] == "60000")

        let cancelled = ContinuousClock.now
        call.cancel()
        let result = await call.result
        #expect(ContinuousClock.now - cancelled < .seconds(5))
        if case .failure(let error as NetworkAgentError) = result {
            #expect(error.code == .cancelled)
        } else {
            Issue.record("expected a cancellation error, got \(result)")
        }
        #expect(server.requestCount == 1)
    }

    @Test func cancellingDuringAnAttemptIsNeverRetried() async throws {
        let server = try LoopbackServer { _ in ServerResponse(fault: .stall) }
        defer { server.stop() }
        let clock = ManualClock(advancesOnSleep: true)
        let provider = NetworkAgentProvider<RetryEndpoint>(
            plugins: [.retry(clock: clock)],
            agent: NetworkAgent(transport: TestTransport.make())
        )
        let endpoint = RetryEndpoint(baseURL: server.baseURL)
        let call = Task { try await provider.request(endpoint: endpoint) }
        #expect(await eventually { server.requestCount == 1 })
        call.cancel()
        let result = await call.result
        if case .failure(let error as NetworkAgentError) = result {
            #expect(error.code == .cancelled)
            #expect(error.message == "the request was cancelled")
        } else {
            Issue.record("expected a cancellation error, got \(result)")
        }
        #expect(clock.sleeps.isEmpty)
        #expect(server.requestCount == 1)
    }
}
