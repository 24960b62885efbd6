import Foundation
import NetworkAgentTestServer
import NetworkAgentTestSupport
import Testing

@testable import NetworkAgent

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Misbehaving servers: the client answers with a typed error, leaks nothing, and keeps serving.
@Suite struct FaultTests {
    static let faults: [(String, ServerResponse.Fault)] = [
        ("reset mid-body", .resetMidBody(afterBytes: 10)),
        ("close mid-body", .closeMidBody(afterBytes: 10)),
        ("truncated chunked body", .truncatedChunked),
        ("reset before the response", .resetBeforeResponse),
        ("close before the response", .closeBeforeResponse),
        ("malformed status line", .malformedStatusLine),
        ("oversized headers", .oversizedHeaders(bytes: 1 << 20)),
    ]

    @Test(arguments: faults)
    func faultIsATypedErrorAndTheNextRequestWorks(name: String, fault: ServerResponse.Fault) async throws {
        let server = try LoopbackServer { request in
            request.path == "/fault"
                ? ServerResponse(
                    body: .chunked([Data(repeating: 1, count: 100), Data(repeating: 2, count: 100)], interval: .zero),
                    fault: fault
                )
                : .text("fine")
        }
        let agent = NetworkAgent(transport: TestTransport.make())
        let error = await #expect(throws: NetworkAgentError.self, "\(name)") {
            try await agent.request(TestEndpoint(baseURL: server.baseURL, path: "/fault", timeout: .seconds(30)))
        }
        #expect(error?.code == .transport, "\(name): \(String(describing: error))")
        let (data, _) = try await agent.request(
            TestEndpoint(baseURL: server.baseURL, path: "/ok", timeout: .seconds(5))
        )
        #expect(String(decoding: data, as: UTF8.self) == "fine")
    }

    @Test func aStalledResponseHitsTheDeadline() async throws {
        let server = try LoopbackServer { _ in ServerResponse(fault: .stall) }
        let agent = NetworkAgent(transport: TestTransport.make())
        let error = await #expect(throws: NetworkAgentError.self) {
            try await agent.request(TestEndpoint(baseURL: server.baseURL, path: "/", timeout: .milliseconds(400)))
        }
        #expect(error?.code == .timedOut)
    }

    @Test func aServerThatClosesEveryConnectionStillServesEveryRequest() async throws {
        let server = try LoopbackServer(closesConnections: true) { request in .text(request.path) }
        let agent = NetworkAgent(transport: TestTransport.make())
        try await withThrowingTaskGroup(of: String.self) { group in
            for index in 0..<50 {
                group.addTask {
                    let (data, _) = try await agent.request(TestEndpoint(baseURL: server.baseURL, path: "/\(index)"))
                    return String(decoding: data, as: UTF8.self)
                }
            }
            var answers = Set<String>()
            for try await answer in group { answers.insert(answer) }
            #expect(answers == Set((0..<50).map { "/\($0)" }))
        }
        #expect(server.connectionCount >= 50)
        #expect(await eventually { server.openConnectionCount == 0 })
    }

    @Test func failedRequestsLeaveNoTaskBehind() async throws {
        let server = try LoopbackServer { request in
            ServerResponse(fault: request.path == "/stall" ? .stall : .resetBeforeResponse)
        }
        let transport = TestTransport.make()
        let agent = NetworkAgent(transport: transport)
        // A reset fails at once (its deadline is only a backstop, long enough for a loaded machine); a stall
        // fails at its deadline. Each must fail, and with its own error.
        let cases: [(path: String, timeout: Duration, code: NetworkAgentError.Code)] = [
            ("/", .seconds(30), .transport), ("/stall", .milliseconds(300), .timedOut),
        ]
        for (path, timeout, code) in cases {
            for attempt in 0..<10 {
                let error = await #expect(throws: NetworkAgentError.self, "\(path) #\(attempt)") {
                    try await agent.request(TestEndpoint(baseURL: server.baseURL, path: path, timeout: timeout))
                }
                #expect(error?.code == code, "\(path) #\(attempt): \(String(describing: error))")
            }
        }
        #expect((TestTransport.activeTransfers(of: transport) ?? 0) == 0)
        #expect(await eventually { server.openConnectionCount == 0 })
    }
}
