import Foundation
import NetworkAgent
import NetworkAgentTestSupport
import NetworkAgentTesting
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Records the order in which hooks run, across plugins.
final class HookLog: Sendable {
    private let entries = Locked<[String]>([])
    func add(_ entry: String) { entries.withLock { $0.append(entry) } }
    var all: [String] { entries.withLock { $0 } }
}

/// A seed-style plugin that tags the request with a header and logs each hook.
struct Tagger: NetworkAgentPlugin {
    let name: String
    let log: HookLog

    func onRequest(_ request: URLRequest, endpoint: any NetworkAgentEndpoint) async throws -> URLRequest {
        log.add("request \(name) saw [\(request.value(forHTTPHeaderField: "X-Tags") ?? "")]")
        var request = request
        request.setValue(
            (request.value(forHTTPHeaderField: "X-Tags").map { $0 + "," } ?? "") + name,
            forHTTPHeaderField: "X-Tags"
        )
        return request
    }

    func intercept(
        _ request: URLRequest,
        endpoint: any NetworkAgentEndpoint,
        next: NetworkAgentExchange
    ) async throws
        -> (data: Data, response: URLResponse)
    {
        log.add("enter \(name)")
        defer { log.add("leave \(name)") }
        return try await next(request)
    }

    func onResponse(
        _ response: URLResponse,
        data: Data,
        request: URLRequest,
        endpoint: any NetworkAgentEndpoint,
        agent: NetworkAgent
    ) async throws -> (data: Data, response: URLResponse) {
        log.add("response \(name) body=\(String(decoding: data, as: UTF8.self))")
        return (data: data + Data(name.utf8), response: response)
    }
}

/// Answers every request itself: the network is never touched.
struct Answering: NetworkAgentPlugin {
    func intercept(
        _ request: URLRequest,
        endpoint: any NetworkAgentEndpoint,
        next: NetworkAgentExchange
    ) async throws
        -> (data: Data, response: URLResponse)
    {
        let response = HTTPURLResponse(url: request.url!, statusCode: 200, httpVersion: nil, headerFields: [:])!
        return (data: Data("cached".utf8), response: response)
    }
}

struct Failing: NetworkAgentPlugin, Error {
    var inRequest = false
    var inResponse = false

    func onRequest(_ request: URLRequest, endpoint: any NetworkAgentEndpoint) async throws -> URLRequest {
        if inRequest { throw self }
        return request
    }

    func onResponse(
        _ response: URLResponse,
        data: Data,
        request: URLRequest,
        endpoint: any NetworkAgentEndpoint,
        agent: NetworkAgent
    ) async throws -> (data: Data, response: URLResponse) {
        if inResponse { throw self }
        return (data: data, response: response)
    }
}

/// Times each attempt that goes through it.
final class AttemptTimer: NetworkAgentPlugin {
    let durations = Locked<[Duration]>([])

    func intercept(
        _ request: URLRequest,
        endpoint: any NetworkAgentEndpoint,
        next: NetworkAgentExchange
    ) async throws
        -> (data: Data, response: URLResponse)
    {
        let start = ContinuousClock.now
        defer { let elapsed = ContinuousClock.now - start; durations.withLock { $0.append(elapsed) } }
        return try await next(request)
    }
}

/// A minimal retry: another attempt after a transport error or a 503, up to `attempts`.
struct NaiveRetry: NetworkAgentPlugin {
    let attempts: Int

    func intercept(
        _ request: URLRequest,
        endpoint: any NetworkAgentEndpoint,
        next: NetworkAgentExchange
    ) async throws
        -> (data: Data, response: URLResponse)
    {
        var attempt = 1
        while true {
            do {
                let result = try await next(request)
                if (result.response as? HTTPURLResponse)?.statusCode == 503, attempt < attempts {
                    attempt += 1
                    continue
                }
                return result
            } catch let error as NetworkAgentError where error.code == .transport && attempt < attempts {
                attempt += 1
            }
        }
    }
}

@Suite struct PluginChainTests {
    let stub = StubTransport()
    var agent: NetworkAgent { NetworkAgent(transport: stub) }
    let endpoint = TestEndpoint(baseURL: URL(string: "http://stub.test")!, path: "/x")

    @Test func seedHooksRunInRegistrationOrderAndInterceptWraps() async throws {
        stub.stub(url: URL(string: "http://stub.test/x")!, with: .init(body: Data("body".utf8)))
        let log = HookLog()
        let provider = NetworkAgentProvider<TestEndpoint>(
            plugins: [Tagger(name: "A", log: log), Tagger(name: "B", log: log)],
            agent: agent
        )
        let (data, _) = try await provider.request(endpoint: endpoint)
        #expect(String(decoding: data, as: UTF8.self) == "bodyAB")
        #expect(
            log.all == [
                "request A saw []", "request B saw [A]", "enter A", "enter B", "leave B", "leave A",
                "response A body=body", "response B body=bodyA",
            ]
        )
        #expect(stub.requests.first?.value(forHTTPHeaderField: "X-Tags") == "A,B")
    }

    @Test func onResponseSeesTheFinalRequestSent() async throws {
        struct Rewriter: NetworkAgentPlugin {
            func intercept(
                _ request: URLRequest,
                endpoint: any NetworkAgentEndpoint,
                next: NetworkAgentExchange
            )
                async throws -> (data: Data, response: URLResponse)
            {
                var request = request
                request.setValue("from-intercept", forHTTPHeaderField: "X-Late")
                return try await next(request)
            }
        }
        let capture = OnResponseSpy()
        let provider = NetworkAgentProvider<TestEndpoint>(plugins: [capture, Rewriter()], agent: agent)
        _ = try await provider.request(endpoint: endpoint)
        let seen = try #require(capture.lastRequest)
        #expect(seen.value(forHTTPHeaderField: "X-Late") == "from-intercept")
        #expect(seen.value(forHTTPHeaderField: "User-Agent")?.hasPrefix("NetworkAgent/") == true)
    }

    @Test func aPluginCanAnswerWithZeroTransportCalls() async throws {
        let log = HookLog()
        let provider = NetworkAgentProvider<TestEndpoint>(
            plugins: [Answering(), Tagger(name: "A", log: log)],
            agent: agent
        )
        let (data, response) = try await provider.request(endpoint: endpoint)
        #expect(String(decoding: data, as: UTF8.self) == "cachedA")
        #expect((response as? HTTPURLResponse)?.statusCode == 200)
        #expect(stub.requests.isEmpty)
        #expect(!log.all.contains("enter A"))
    }

    /// The requirement is `consuming`; a plugin declaring its parameter either way (the README's form, or
    /// `consuming` as the bundled plugins do) implements it, and each sees the one before it.
    @Test func pluginsWithAndWithoutConsumingChainTheirChanges() async throws {
        struct ConsumingTagger: NetworkAgentPlugin {
            let name: String
            func onRequest(
                _ request: consuming URLRequest,
                endpoint: any NetworkAgentEndpoint
            ) async throws -> URLRequest {
                let tags = request.value(forHTTPHeaderField: "X-Tags").map { $0 + "," } ?? ""
                request.setValue(tags + name, forHTTPHeaderField: "X-Tags")
                return request
            }
        }
        let log = HookLog()
        let provider = NetworkAgentProvider<TestEndpoint>(
            plugins: [
                Tagger(name: "A", log: log), ConsumingTagger(name: "B"), AttemptTimer(), Tagger(name: "C", log: log),
            ],
            agent: agent
        )
        _ = try await provider.request(endpoint: endpoint)
        #expect(log.all.prefix(2) == ["request A saw []", "request C saw [A,B]"])
        #expect(stub.requests.first?.value(forHTTPHeaderField: "X-Tags") == "A,B,C")
    }

    /// A request handed over to `onRequest` is still the one `onResponse` sees when an interceptor answers without
    /// sending anything.
    @Test func onResponseSeesTheConsumedRequestWhenNothingIsSent() async throws {
        struct ConsumingMarker: NetworkAgentPlugin {
            func onRequest(
                _ request: consuming URLRequest,
                endpoint: any NetworkAgentEndpoint
            ) async throws -> URLRequest {
                request.setValue("marked", forHTTPHeaderField: "X-Mark")
                return request
            }
        }
        let capture = OnResponseSpy()
        let provider = NetworkAgentProvider<TestEndpoint>(
            plugins: [capture, ConsumingMarker(), Answering()],
            agent: agent
        )
        _ = try await provider.request(endpoint: endpoint)
        let seen = try #require(capture.lastRequest)
        #expect(seen.value(forHTTPHeaderField: "X-Mark") == "marked")
        #expect(stub.requests.isEmpty)
    }

    @Test func aPluginCanRetryATransportErrorAndA503() async throws {
        let url = URL(string: "http://stub.test/x")!
        stub.stub(url: url, with: .connectionRefused, .status(503), .init(body: Data("ok".utf8)))
        let timer = AttemptTimer()
        let provider = NetworkAgentProvider<TestEndpoint>(plugins: [NaiveRetry(attempts: 3), timer], agent: agent)
        let (data, _) = try await provider.request(endpoint: endpoint)
        #expect(String(decoding: data, as: UTF8.self) == "ok")
        #expect(stub.requests.count == 3)
        #expect(timer.durations.withLock { $0.count } == 3)
    }

    @Test func aThrowInOnRequestSkipsTheNetwork() async {
        let provider = NetworkAgentProvider<TestEndpoint>(plugins: [Failing(inRequest: true)], agent: agent)
        await #expect(throws: Failing.self) { try await provider.request(endpoint: endpoint) }
        #expect(stub.requests.isEmpty)
    }

    @Test func aThrowInOnResponseFailsTheCall() async {
        let provider = NetworkAgentProvider<TestEndpoint>(plugins: [Failing(inResponse: true)], agent: agent)
        await #expect(throws: Failing.self) { try await provider.request(endpoint: endpoint) }
        #expect(stub.requests.count == 1)
    }

    @Test func sideRequestsSkipTheChain() async throws {
        let log = HookLog()
        struct SideCaller: NetworkAgentPlugin {
            let endpoint: TestEndpoint
            func onResponse(
                _ response: URLResponse,
                data: Data,
                request: URLRequest,
                endpoint: any NetworkAgentEndpoint,
                agent: NetworkAgent
            ) async throws -> (data: Data, response: URLResponse) {
                var refresh = self.endpoint
                refresh.path = "/refresh"
                _ = try await agent.request(refresh)
                var resend = request
                resend.setValue("again", forHTTPHeaderField: "X-Resent")
                return try await agent.send(resend)
            }
        }
        let provider = NetworkAgentProvider<TestEndpoint>(
            plugins: [Tagger(name: "A", log: log), SideCaller(endpoint: endpoint)],
            agent: agent
        )
        _ = try await provider.request(endpoint: endpoint)
        #expect(stub.requests.map { $0.url?.path } == ["/x", "/refresh", "/x"])
        #expect(stub.requests[2].value(forHTTPHeaderField: "X-Tags") == "A")
        #expect(stub.requests[2].value(forHTTPHeaderField: "X-Resent") == "again")
        #expect(log.all.filter { $0.hasPrefix("request") }.count == 1)
    }

    @Test func validationThrowsWithStatusHeadersAndBody() async throws {
        stub.stub(
            url: URL(string: "http://stub.test/x")!,
            with: .init(statusCode: 422, headers: ["X-Why": "bad"], body: Data("nope".utf8))
        )
        let provider = NetworkAgentProvider<TestEndpoint>(plugins: [.validate()], agent: agent)
        let error = await #expect(throws: NetworkAgentError.self) { try await provider.request(endpoint: endpoint) }
        #expect(error?.code == .unacceptableStatus)
        #expect(error?.statusCode == 422)
        #expect(error?.response?.value(forHTTPHeaderField: "x-why") == "bad")
        #expect(error?.data == Data("nope".utf8))
        #expect(error?.shortDescription == "unacceptable_status")
    }

    @Test func validationPassesAcceptableStatuses() async throws {
        stub.stub(url: URL(string: "http://stub.test/x")!, with: .status(304))
        let provider = NetworkAgentProvider<TestEndpoint>(plugins: [.validate(200..<400)], agent: agent)
        let (_, response) = try await provider.request(endpoint: endpoint)
        #expect((response as? HTTPURLResponse)?.statusCode == 304)
    }

    @Test func headersInjectedByPluginsAreCheckedBeforeSending() async {
        struct Injector: NetworkAgentPlugin {
            func onRequest(_ request: URLRequest, endpoint: any NetworkAgentEndpoint) async throws -> URLRequest {
                var request = request
                request.setValue("v", forHTTPHeaderField: "Bad Name: x\r\nEvil")
                return request
            }
        }
        let provider = NetworkAgentProvider<TestEndpoint>(plugins: [Injector()], agent: agent)
        let error = await #expect(throws: NetworkAgentError.self) { try await provider.request(endpoint: endpoint) }
        #expect(error?.code == .invalidHeader)
        #expect(stub.requests.isEmpty)
    }

    /// Observers installed inside one another each receive every event emitted inside them, outermost first,
    /// also from a child task, and none of them once its scope has ended.
    @Test func nestedObserversReceiveEveryEventOutermostFirst() async {
        let log = HookLog()
        func observer(_ name: String) -> NetworkAgentEvents.Observer {
            { event in log.add("\(name) \(event.name)") }
        }
        func emit(_ name: String) {
            NetworkAgentEvents.emit(NetworkAgentEvent(source: "test", name: name))
        }
        #expect(!NetworkAgentEvents.hasObservers)
        emit("unobserved")
        await NetworkAgentEvents.observing(observer("a")) {
            #expect(NetworkAgentEvents.hasObservers)
            emit("one")
            await NetworkAgentEvents.observing(observer("b")) {
                emit("two")
                await NetworkAgentEvents.observing(observer("c")) {
                    emit("three")
                    await Task { emit("child") }.value
                }
                emit("two-again")
            }
            emit("one-again")
        }
        emit("unobserved-again")
        #expect(!NetworkAgentEvents.hasObservers)
        #expect(
            log.all == [
                "a one",
                "a two", "b two",
                "a three", "b three", "c three",
                "a child", "b child", "c child",
                "a two-again", "b two-again",
                "a one-again",
            ]
        )
    }
}

@Suite struct EventTests {
    /// Emits one event per attempt.
    struct Emitter: NetworkAgentPlugin {
        func intercept(
            _ request: URLRequest,
            endpoint: any NetworkAgentEndpoint,
            next: NetworkAgentExchange
        )
            async throws -> (data: Data, response: URLResponse)
        {
            NetworkAgentEvents.emit(NetworkAgentEvent(source: "test", name: "attempt", attributes: ["n": "1"]))
            return try await next(request)
        }
    }

    /// Collects the events of the calls it wraps.
    final class Collector: NetworkAgentPlugin {
        let events = Locked<[NetworkAgentEvent]>([])

        func intercept(
            _ request: URLRequest,
            endpoint: any NetworkAgentEndpoint,
            next: NetworkAgentExchange
        )
            async throws -> (data: Data, response: URLResponse)
        {
            try await NetworkAgentEvents.observing({ event in self.events.withLock { $0.append(event) } }) {
                try await next(request)
            }
        }
    }

    @Test func innerPluginEventsReachOuterObservers() async throws {
        let collector = Collector()
        let provider = NetworkAgentProvider<TestEndpoint>(
            plugins: [collector, Emitter()],
            agent: NetworkAgent(transport: StubTransport(fallback: .status(200)))
        )
        _ = try await provider.request(endpoint: TestEndpoint())
        _ = try await provider.request(endpoint: TestEndpoint())
        #expect(collector.events.withLock { $0.map(\.description) } == ["test.attempt n=1", "test.attempt n=1"])
        #expect(!NetworkAgentEvents.hasObservers)
    }
}
