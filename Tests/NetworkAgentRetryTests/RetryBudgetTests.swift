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

/// The retry budget (gRPC's token bucket): shared by every call through one plugin value, it refuses retries once
/// more than half its tokens are spent, and hands back the last real answer or error.
@Suite struct RetryBudgetTests {
    static func plugin(
        maximumAttempts: Int = 10,
        budget: RetryPlugin.RetryBudget? = RetryPlugin.RetryBudget(maximumTokens: 10, tokenRatio: 0.5)
    ) -> RetryPlugin {
        .retry(
            .init(maximumAttempts: maximumAttempts, budget: budget),
            clock: ManualClock(advancesOnSleep: true),
            random: { 0 }
        )
    }

    static func provider(_ plugin: RetryPlugin, _ stub: StubTransport) -> NetworkAgentProvider<RetryEndpoint> {
        NetworkAgentProvider(plugins: [plugin], agent: NetworkAgent(transport: stub))
    }

    @Test func aSpentBudgetHandsBackTheLastResponse() async throws {
        let stub = StubTransport(fallback: .status(503))
        let plugin = Self.plugin()
        let provider = Self.provider(plugin, stub)
        let log = EventRecorder()
        // 10 tokens: the failures take them to 9, 8, 7, 6, 5; at 5 (not more than half) the retry is refused.
        let (_, response) = try await log.observing { try await provider.request(endpoint: .stubbed) }
        #expect(response.status == 503)
        #expect(stub.requests.count == 5)
        #expect(plugin.budgetTokens == 5)
        let throttled = log.events(from: "retry", named: "retry_throttled")
        #expect(throttled.count == 1)
        #expect(throttled.first?.attributes["attempt"] == "5")
        #expect(throttled.first?.attributes["reason"] == "status_503")
        #expect(log.events(from: "retry", named: "retry_exhausted").isEmpty)
        // The next call is not retried at all.
        _ = try await provider.request(endpoint: .stubbed)
        #expect(stub.requests.count == 6)
        #expect(plugin.budgetTokens == 4)
    }

    @Test func aSpentBudgetRethrowsTheLastErrorUnchangedButForItsMessage() async throws {
        let stub = StubTransport(fallback: .connectionRefused)
        let provider = Self.provider(Self.plugin(budget: .init(maximumTokens: 4, tokenRatio: 0.1)), stub)
        let error = await #expect(throws: NetworkAgentError.self) { try await provider.request(endpoint: .stubbed) }
        #expect(error?.code == .transport)
        #expect(error?.urlErrorCode == .cannotConnectToHost)
        #expect(error?.message.hasSuffix("[retry: gave up after 2 attempts: the retry budget is spent]") == true)
        #expect(stub.requests.count == 2)
    }

    @Test func successesEarnRetriesBack() async throws {
        let stub = StubTransport(fallback: .status(503))
        let plugin = Self.plugin()
        let provider = Self.provider(plugin, stub)
        _ = try await provider.request(endpoint: .stubbed)
        #expect(plugin.budgetTokens == 5)
        // Four 200s, then 503s again (the last answer repeats).
        stub.stub(
            matching: { _ in true },
            with: [.status(200), .status(200), .status(200), .status(200), .status(503)]
        )
        for _ in 0..<4 { _ = try await provider.request(endpoint: .stubbed) }
        #expect(plugin.budgetTokens == 7)
        // 7 → 6: retried; 6 → 5: refused.
        let before = stub.requests.count
        _ = try await provider.request(endpoint: .stubbed)
        #expect(stub.requests.count - before == 2)
    }

    @Test func copiesOfOnePluginShareTheBudget() async throws {
        let stub = StubTransport(fallback: .status(503))
        let plugin = Self.plugin()
        let first = Self.provider(plugin, stub)
        let second = Self.provider(plugin, stub)
        _ = try await first.request(endpoint: .stubbed)
        _ = try await second.request(endpoint: .stubbed)
        #expect(stub.requests.count == 6)
    }

    @Test func noBudgetRetriesAsThePolicyAllows() async throws {
        let stub = StubTransport(fallback: .status(503))
        let plugin = Self.plugin(budget: nil)
        let provider = Self.provider(plugin, stub)
        _ = try await provider.request(endpoint: .stubbed)
        _ = try await provider.request(endpoint: .stubbed)
        #expect(stub.requests.count == 20)
        #expect(plugin.budgetTokens == nil)
    }

    @Test func theDefaultBudgetIsOnAndGenerous() {
        #expect(RetryPlugin.Policy.default.budget == RetryPlugin.RetryBudget(maximumTokens: 100, tokenRatio: 0.1))
        #expect(RetryPlugin.retry().budgetTokens == 100)
    }

    @Test func concurrentCallsNeverSpendMoreThanTheBudget() async throws {
        let stub = StubTransport(fallback: .status(503))
        let plugin = Self.plugin(maximumAttempts: 3, budget: .init(maximumTokens: 20, tokenRatio: 0.1))
        let provider = Self.provider(plugin, stub)
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<50 { group.addTask { _ = try? await provider.request(endpoint: .stubbed) } }
        }
        // Retries are allowed while more than 10 tokens are left: at most 10 of the failures are followed by one.
        #expect(stub.requests.count <= 50 + 10)
        #expect(stub.requests.count >= 50)
        #expect(plugin.budgetTokens == 0)
    }

    @Test func overTheWireADeadOriginSeesAboutOneRequestPerCall() async throws {
        let server = try LoopbackServer { _ in .text("down", status: 503) }
        defer { server.stop() }
        let plugin = RetryPlugin.retry(
            .init(budget: .init(maximumTokens: 10, tokenRatio: 0.1)),
            clock: ManualClock(advancesOnSleep: true)
        )
        let provider = NetworkAgentProvider<RetryEndpoint>(
            plugins: [plugin],
            agent: NetworkAgent(transport: TestTransport.make())
        )
        for _ in 0..<10 {
            let (_, response) = try await provider.request(endpoint: RetryEndpoint(baseURL: server.baseURL))
            #expect(response.status == 503)
        }
        // 3 attempts (10 → 7 tokens), then 2 (7 → 5), then one per call.
        #expect(server.requestCount == 3 + 2 + 8)
    }
}
