import Foundation
import NetworkAgent
import NetworkAgentTestServer
import NetworkAgentTestSupport
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Every way a call binds the progress handler's task-local, over the wire.
///
/// Swift 6.3.1 crashes optimised code that binds a `@TaskLocal` holding an optional `@Sendable` closure with
/// `withValue` (`swift_task_localValuePush`, Docs/LinuxNotes.md), which is what side requests and calls with a
/// progress handler did. A debug build never crashed there, so these tests only fail in the release run
/// (`Scripts/test --release`, which CI runs); they are here so that a shape that crashes optimised code cannot come
/// back unseen.
@Suite struct OptimisedBuildTests {
    let server: LoopbackServer
    let agent: NetworkAgent

    init() throws {
        server = try LoopbackServer { request in .text("ok \(request.path)") }
        agent = NetworkAgent(transport: TestTransport.make())
    }

    func endpoint(_ path: String) -> TestEndpoint {
        TestEndpoint(baseURL: server.baseURL, path: path, headers: [:], timeout: .seconds(10))
    }

    @Test func aSideRequestWithoutAProgressHandler() async throws {
        let (data, _) = try await agent.send(URLRequest(url: server.baseURL.appendingPathComponent("one")))
        #expect(String(decoding: data, as: UTF8.self) == "ok /one")
    }

    @Test func aSideRequestForAnEndpointWithAProgressHandler() async throws {
        let received = Locked(0)
        let (data, _) = try await agent.request(endpoint("/two")) { progress in
            received.withLock { $0 = max($0, progress.bytesReceived) }
        }
        #expect(String(decoding: data, as: UTF8.self) == "ok /two")
        #expect(received.withLock { $0 } == data.count)
    }

    @Test func sixtyFourSideRequestsAtOnce() async throws {
        let bodies = try await withThrowingTaskGroup(of: String.self) { group in
            for index in 0..<64 {
                group.addTask {
                    let url = server.baseURL.appendingPathComponent("n\(index)")
                    return String(decoding: try await agent.send(URLRequest(url: url)).data, as: UTF8.self)
                }
            }
            return try await group.reduce(into: Set<String>()) { $0.insert($1) }
        }
        #expect(bodies == Set((0..<64).map { "ok /n\($0)" }))
    }

    @Test func aProviderCallWithAProgressHandlerAndASideRequestInsideIt() async throws {
        let provider = NetworkAgentProvider<TestEndpoint>(plugins: [SideRequestPlugin(agent: agent)], agent: agent)
        let calls = Locked(0)
        let (data, _) = try await provider.request(endpoint: endpoint("/three")) { _ in calls.withLock { $0 += 1 } }
        #expect(String(decoding: data, as: UTF8.self) == "ok /three")
        #expect(calls.withLock { $0 } > 0)
        #expect(server.requests.map(\.path) == ["/aside", "/three"])
    }

    @Test func aStreamWithAProgressHandler() async throws {
        let provider = NetworkAgentProvider<TestEndpoint>(agent: agent)
        let stream = try await provider.stream(endpoint: endpoint("/four")) { _ in }
        var body = Data()
        for try await chunk in stream.body { body.append(chunk) }
        #expect(String(decoding: body, as: UTF8.self) == "ok /four")
    }
}

/// Makes a side request through the agent before each call, as the token refresher does.
private struct SideRequestPlugin: NetworkAgentPlugin {
    let agent: NetworkAgent

    func onRequest(_ request: URLRequest, endpoint: any NetworkAgentEndpoint) async throws -> URLRequest {
        guard let url = request.url else { return request }
        _ = try await agent.send(URLRequest(url: url.deletingLastPathComponent().appendingPathComponent("aside")))
        return request
    }
}
