import Foundation
import NetworkAgent
import NetworkAgentTesting
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `onFailureBeforeExchange`: every plugin learns of a call that failed before its exchange.
@Suite struct FailureBeforeExchangeTests {
    struct Refused: Error {}

    /// Logs its hooks; throws in `onRequest` when asked to.
    struct Hooks: NetworkAgentPlugin {
        let name: String
        let log: HookLog
        var throwsInOnRequest = false

        func onRequest(_ request: URLRequest, endpoint: any NetworkAgentEndpoint) async throws -> URLRequest {
            log.add("onRequest \(name)")
            if throwsInOnRequest { throw Refused() }
            return request
        }

        func intercept(
            _ request: URLRequest,
            endpoint: any NetworkAgentEndpoint,
            next: NetworkAgentExchange
        ) async throws -> (data: Data, response: URLResponse) {
            log.add("intercept \(name)")
            return try await next(request)
        }

        func onFailureBeforeExchange(_ error: any Error, endpoint: any NetworkAgentEndpoint) async {
            log.add("failed \(name) \(error is Refused ? "refused" : String(describing: error))")
        }
    }

    /// Implements no hook: the default of the new one must compile and do nothing.
    struct Silent: NetworkAgentPlugin {}

    @Test func aThrowInOnRequestTellsEveryPluginInOrder() async throws {
        let log = HookLog()
        let stub = StubTransport(fallback: .init(body: Data()))
        let provider = NetworkAgentProvider<TestEndpoint>(
            plugins: [
                Hooks(name: "a", log: log), Silent(), Hooks(name: "b", log: log, throwsInOnRequest: true),
                Hooks(name: "c", log: log),
            ],
            agent: NetworkAgent(transport: stub)
        )
        await #expect(throws: Refused.self) { try await provider.request(endpoint: TestEndpoint()) }
        #expect(log.all == ["onRequest a", "onRequest b", "failed a refused", "failed b refused", "failed c refused"])
        #expect(stub.requests.isEmpty)
    }

    @Test func anEndpointThatCannotBeBuiltTellsEveryPlugin() async throws {
        struct NotEncodable: Sendable {}
        let log = HookLog()
        let provider = NetworkAgentProvider<TestEndpoint>(
            plugins: [Hooks(name: "a", log: log)],
            agent: NetworkAgent(transport: StubTransport(fallback: .init(body: Data())))
        )
        let endpoint = TestEndpoint(method: .post, task: .requestWithoutAttributes(content: NotEncodable()))
        let error = await #expect(throws: NetworkAgentError.self) { try await provider.stream(endpoint: endpoint) }
        #expect(error?.code == .encoding)
        #expect(log.all.count == 1 && log.all.first?.hasPrefix("failed a ") == true)
    }
}
