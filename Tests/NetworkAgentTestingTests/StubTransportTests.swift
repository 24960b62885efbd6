import Foundation
import NetworkAgent
import NetworkAgentTesting
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

enum Catalog: NetworkAgentEndpoint {
    case items(page: Int)
    case create

    var baseURL: URL { URL(string: "https://catalog.test/v1")! }
    var path: String { self == .create ? "/items" : "/items" }
    var method: HTTPMethod { self == .create ? .post : .get }
    var task: HTTPTask {
        switch self {
        case .items(let page): .requestAttributes(attributes: ["page": page], encoding: .url)
        case .create: .requestWithoutAttributes(content: "new")
        }
    }
}

extension Catalog: Equatable {}

@Suite struct StubTransportTests {
    let stub = StubTransport()
    var provider: NetworkAgentProvider<Catalog> { NetworkAgentProvider(agent: NetworkAgent(transport: stub)) }

    func status(_ endpoint: Catalog) async throws -> Int? {
        (try await provider.request(endpoint: endpoint).response as? HTTPURLResponse)?.statusCode
    }

    @Test func stubsByEndpointMatchMethodAndQuery() async throws {
        stub.stub(Catalog.items(page: 1), with: .json(Data("[1]".utf8)))
        stub.stub(Catalog.create, with: .status(201))
        let (data, _) = try await provider.request(endpoint: .items(page: 1))
        #expect(data == Data("[1]".utf8))
        #expect(try await status(.items(page: 2)) == 404)
        #expect(try await status(.create) == 201)
        #expect(stub.requests.map { $0.url?.query } == ["page=1", "page=2", nil])
        #expect(stub.requests.last?.httpBody == Data("new".utf8))
    }

    @Test func responsesAreAnsweredInTurnThenTheLastRepeats() async throws {
        stub.stub(Catalog.create, with: .status(503), .status(500), .status(201))
        var statuses: [Int?] = []
        for _ in 0..<4 { statuses.append(try await status(.create)) }
        #expect(statuses == [503, 500, 201, 201])
    }

    @Test func errorsAreThrown() async {
        stub.stub(Catalog.create, with: .connectionRefused)
        let error = await #expect(throws: NetworkAgentError.self) { try await provider.request(endpoint: .create) }
        #expect(error?.code == .transport)
        #expect(error?.urlErrorCode == .cannotConnectToHost)
    }

    @Test func aNeverAnsweringStubEndsWithCancellation() async throws {
        stub.stub(Catalog.create, with: .never)
        let call = Task { try await provider.request(endpoint: .create) }
        while stub.requests.isEmpty { await Task.yield() }
        call.cancel()
        let result = await call.result
        guard case .failure(let error as NetworkAgentError) = result else {
            Issue.record("expected a cancellation, got \(result)")
            return
        }
        #expect(error.code == .cancelled)
    }

    @Test func predicateStubsAndFallback() async throws {
        let fallbackStub = StubTransport(fallback: .status(418))
        fallbackStub.stub(matching: { $0.httpMethod == "POST" }, with: [.status(202)])
        let provider = NetworkAgentProvider<Catalog>(agent: NetworkAgent(transport: fallbackStub))
        #expect((try await provider.request(endpoint: .create).response as? HTTPURLResponse)?.statusCode == 202)
        #expect((try await provider.request(endpoint: .items(page: 1)).response as? HTTPURLResponse)?.statusCode == 418)
    }

    @Test func publicValuesAreSendable() async throws {
        let response = StubTransport.Response.json(Data("{}".utf8)).delayed(by: .milliseconds(1))
        let sent = await Task.detached { (response, StubTransport()) }.value
        #expect(sent.0.delay == .milliseconds(1))
    }
}
