import Foundation
import NetworkAgent
import NetworkAgentTesting
import Testing

@testable import NetworkAgentCircuitBreaker

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// An endpoint at any base URL; helpers of this target only (kept in this file on purpose).
struct BreakerEndpoint: NetworkAgentEndpoint {
    var baseURL: URL
    var path = "/"
    var method = HTTPMethod.get
    var headers: [String: String]? = nil
    var task = HTTPTask.requestPlain

    static let stubbed = BreakerEndpoint(baseURL: URL(string: "http://stub.invalid")!)
}

extension EventRecorder {
    /// The circuit transitions recorded, in order, as `from>to`.
    var transitions: [String] {
        events.compactMap { event in
            guard case .circuitStateChanged(_, let from, let to) = event.kind else { return nil }
            return "\(from)>\(to)"
        }
    }
}

/// An inner plugin that makes each call take `duration` of the manual clock.
struct ClockAdvancer: NetworkAgentPlugin {
    let clock: ManualClock
    let duration: Duration

    func intercept(
        _ request: URLRequest,
        endpoint: any NetworkAgentEndpoint,
        next: NetworkAgentExchange
    ) async throws -> (data: Data, response: URLResponse) {
        clock.advance(by: duration)
        return try await next(request)
    }
}

/// Expects `call` to fail fast with the breaker's ``/NetworkAgent/NetworkAgentError/Code/circuitOpen``.
func expectFailFast(
    _ call: () async throws -> (data: Data, response: URLResponse),
    sourceLocation: SourceLocation = #_sourceLocation
) async {
    let error = await #expect(throws: NetworkAgentError.self, sourceLocation: sourceLocation) { try await call() }
    #expect(error?.code == .circuitOpen, sourceLocation: sourceLocation)
    #expect(error?.circuitBreakerError?.code == .open, sourceLocation: sourceLocation)
}

/// The plugin over a stub transport with a `ManualClock`: classification, fail-fast, probes, keys, events.
@Suite struct CircuitBreakerPluginTests {
    static func small(
        minimumCalls: Int = 4,
        openInterval: Duration = .seconds(10),
        probes: Int = 2,
        key: CircuitBreakerPlugin.Key = .origin
    ) -> CircuitBreakerPlugin.Configuration {
        CircuitBreakerPlugin.Configuration(
            window: .count(minimumCalls),
            minimumCalls: minimumCalls,
            openInterval: openInterval,
            openIntervalJitter: 0,
            probeCalls: probes,
            key: key
        )
    }

    static func provider(
        _ stub: StubTransport,
        _ plugins: [any NetworkAgentPlugin]
    ) -> NetworkAgentProvider<BreakerEndpoint> {
        NetworkAgentProvider(plugins: plugins, agent: NetworkAgent(transport: stub))
    }

    @Test(arguments: [
        (500, CircuitBreakerPlugin.Classification.failure), (503, .failure), (599, .failure), (429, .failure),
        (408, .failure), (200, .success), (304, .success), (400, .success), (401, .success), (404, .success),
    ])
    func statusesAreClassified(status: Int, expected: CircuitBreakerPlugin.Classification) throws {
        let response = try #require(
            HTTPURLResponse(url: URL(string: "http://a")!, statusCode: status, httpVersion: nil, headerFields: nil)
        )
        #expect(CircuitBreakerPlugin.defaultClassification(.response(response)) == expected)
    }

    @Test(arguments: [
        ("http://example.com/a", "http://example.com:80"),
        ("https://Example.COM/a?b#c", "https://example.com:443"),
        ("HTTP://example.com:8080", "http://example.com:8080"),
        ("https://user:secret@api.example.com:8443/x", "https://api.example.com:8443"),
        ("http://[::1]:9000/p", "http://[::1]:9000"),
        ("http://[::1]/p", "http://[::1]:80"),
        ("http://127.0.0.1:5/?q=a@b", "http://127.0.0.1:5"),
    ])
    func theOriginKeyIsSchemeHostAndPortWithoutCredentials(url: String, key: String) {
        #expect(CircuitBreakerPlugin.origin(of: URL(string: url)) == key)
    }

    @Test func errorsAreClassified() {
        let classify = CircuitBreakerPlugin.defaultClassification
        #expect(classify(.error(NetworkAgentError(.timedOut, "late"))) == .failure)
        #expect(
            classify(.error(NetworkAgentError(.transport, "refused", underlying: URLError(.cannotConnectToHost))))
                == .failure
        )
        #expect(classify(.error(NetworkAgentError(.cancelled, "cancelled"))) == .ignored)
        #expect(classify(.error(CancellationError())) == .ignored)
        #expect(classify(.error(NetworkAgentError(.encoding, "bad body"))) == .ignored)
    }

    @Test func opensAfterFailuresAndFailsFastWithUntilWhen() async throws {
        let stub = StubTransport(fallback: .status(503))
        let clock = ManualClock()
        let breaker = CircuitBreakerPlugin.circuitBreaker(Self.small(), clock: clock, now: { clock.date })
        let provider = Self.provider(stub, [breaker])
        let log = EventRecorder()
        for _ in 0..<4 {
            let (_, response) = try await log.observing { try await provider.request(endpoint: .stubbed) }
            #expect((response as? HTTPURLResponse)?.statusCode == 503)
        }
        #expect(log.transitions == ["closed>open"])
        #expect(breaker.state(forKey: "http://stub.invalid:80") == .open)
        clock.advance(by: .seconds(4))
        let thrown = await #expect(throws: NetworkAgentError.self) {
            try await log.observing { try await provider.request(endpoint: .stubbed) }
        }
        #expect(thrown?.code == .circuitOpen)
        let error = thrown?.circuitBreakerError
        #expect(error?.code == .open)
        #expect(error?.key == "http://stub.invalid:80")
        #expect(error?.retryAfter == .seconds(6))
        #expect(error?.openUntil == clock.startDate.addingTimeInterval(10))
        #expect(stub.requests.count == 4)
        #expect(log.events.filter { $0.name == "rejected" }.count == 1)
    }

    @Test func probesCloseTheCircuitOnceTheOriginHeals() async throws {
        let stub = StubTransport(fallback: .status(503))
        let clock = ManualClock()
        let provider = Self.provider(stub, [CircuitBreakerPlugin.circuitBreaker(Self.small(), clock: clock)])
        let log = EventRecorder()
        for _ in 0..<4 { _ = try await provider.request(endpoint: .stubbed) }
        stub.stub(url: URL(string: "http://stub.invalid/")!, with: .status(200), .status(200), .status(200))
        clock.advance(by: .seconds(10))
        for _ in 0..<3 {
            let (_, response) = try await log.observing { try await provider.request(endpoint: .stubbed) }
            #expect((response as? HTTPURLResponse)?.statusCode == 200)
        }
        #expect(log.transitions == ["open>half_open", "half_open>closed"])
    }

    @Test func aFailedProbeReopens() async throws {
        let stub = StubTransport(fallback: .status(503))
        let clock = ManualClock()
        let breaker = CircuitBreakerPlugin.circuitBreaker(Self.small(probes: 1), clock: clock)
        let provider = Self.provider(stub, [breaker])
        let log = EventRecorder()
        for _ in 0..<4 { _ = try await provider.request(endpoint: .stubbed) }
        clock.advance(by: .seconds(10))
        _ = try await log.observing { try await provider.request(endpoint: .stubbed) }
        #expect(log.transitions == ["open>half_open", "half_open>open"])
        await expectFailFast { try await provider.request(endpoint: .stubbed) }
        #expect(stub.requests.count == 5)
    }

    @Test func clientErrorsAndCancellationsDoNotOpen() async throws {
        let stub = StubTransport(fallback: .status(404))
        let clock = ManualClock()
        let breaker = CircuitBreakerPlugin.circuitBreaker(Self.small(), clock: clock)
        let provider = Self.provider(stub, [breaker])
        for _ in 0..<10 { _ = try await provider.request(endpoint: .stubbed) }
        stub.stub(
            url: URL(string: "http://stub.invalid/")!,
            with: .failure(NetworkAgentError(.cancelled, "c")),
            .failure(NetworkAgentError(.cancelled, "c")),
            .failure(NetworkAgentError(.cancelled, "c")),
            .failure(NetworkAgentError(.cancelled, "c"))
        )
        for _ in 0..<4 {
            await #expect(throws: NetworkAgentError.self) { try await provider.request(endpoint: .stubbed) }
        }
        #expect(breaker.state(forKey: "http://stub.invalid:80") == .closed)
    }

    @Test func timeoutsAndConnectionFailuresOpen() async throws {
        let stub = StubTransport(fallback: .connectionRefused)
        let clock = ManualClock()
        let breaker = CircuitBreakerPlugin.circuitBreaker(Self.small(minimumCalls: 2), clock: clock)
        let provider = Self.provider(stub, [breaker])
        stub.stub(url: URL(string: "http://stub.invalid/")!, with: .failure(NetworkAgentError(.timedOut, "late")))
        for _ in 0..<2 {
            await #expect(throws: NetworkAgentError.self) { try await provider.request(endpoint: .stubbed) }
        }
        #expect(breaker.state(forKey: "http://stub.invalid:80") == .open)
    }

    @Test func slowCallsOpenTheCircuit() async throws {
        let stub = StubTransport(fallback: .status(200))
        let clock = ManualClock()
        var configuration = Self.small(minimumCalls: 2)
        configuration.slowCallDuration = .seconds(2)
        configuration.slowCallRateThreshold = 1
        let breaker = CircuitBreakerPlugin.circuitBreaker(configuration, clock: clock)
        let provider = Self.provider(stub, [breaker, ClockAdvancer(clock: clock, duration: .seconds(3))])
        _ = try await provider.request(endpoint: .stubbed)
        #expect(breaker.state(forKey: "http://stub.invalid:80") == .closed)
        _ = try await provider.request(endpoint: .stubbed)
        #expect(breaker.state(forKey: "http://stub.invalid:80") == .open)
    }

    @Test func eachOriginHasItsOwnCircuit() async throws {
        let stub = StubTransport(fallback: .status(503))
        let healthy = URL(string: "https://healthy.invalid")!
        stub.stub(matching: { $0.url?.host == "healthy.invalid" }, with: Array(repeating: .status(200), count: 3))
        let breaker = CircuitBreakerPlugin.circuitBreaker(Self.small(), clock: ManualClock())
        let provider = Self.provider(stub, [breaker])
        for _ in 0..<4 { _ = try await provider.request(endpoint: .stubbed) }
        await expectFailFast { try await provider.request(endpoint: .stubbed) }
        let (_, response) = try await provider.request(endpoint: BreakerEndpoint(baseURL: healthy))
        #expect((response as? HTTPURLResponse)?.statusCode == 200)
        #expect(breaker.state(forKey: "https://healthy.invalid:443") == .closed)
    }

    /// The plugin finds a circuit by the URL's `scheme://authority` text and builds the key once per text: every
    /// spelling of one origin still lands on its one circuit, and what the caller sees names the key.
    @Test func everySpellingOfAnOriginSharesItsCircuit() async throws {
        let stub = StubTransport(fallback: .status(503))
        let breaker = CircuitBreakerPlugin.circuitBreaker(Self.small(), clock: ManualClock())
        let provider = Self.provider(stub, [breaker])
        let spellings = [
            "http://stub.invalid", "HTTP://Stub.Invalid", "http://stub.invalid:80", "http://user:secret@stub.invalid",
        ]
        let log = EventRecorder()
        for spelling in spellings {
            _ = try await log.observing {
                try await provider.request(endpoint: BreakerEndpoint(baseURL: URL(string: spelling)!))
            }
        }
        #expect(log.transitions == ["closed>open"])
        #expect(breaker.state(forKey: "http://stub.invalid:80") == .open)
        for spelling in spellings {
            let error = await #expect(throws: NetworkAgentError.self) {
                try await provider.request(endpoint: BreakerEndpoint(baseURL: URL(string: spelling)!))
            }
            #expect(error?.circuitBreakerError?.key == "http://stub.invalid:80")
        }
        #expect(stub.requests.count == 4)
    }

    @Test func aKeyFunctionSplitsCircuitsByRoute() async throws {
        let stub = StubTransport(fallback: .status(503))
        stub.stub(matching: { $0.url?.path == "/fine" }, with: Array(repeating: .status(200), count: 2))
        let breaker = CircuitBreakerPlugin.circuitBreaker(Self.small(key: .originAndPath), clock: ManualClock())
        let provider = Self.provider(stub, [breaker])
        var broken = BreakerEndpoint.stubbed
        broken.path = "/broken"
        for _ in 0..<4 { _ = try await provider.request(endpoint: broken) }
        await expectFailFast { try await provider.request(endpoint: broken) }
        var fine = BreakerEndpoint.stubbed
        fine.path = "/fine"
        let (_, response) = try await provider.request(endpoint: fine)
        #expect((response as? HTTPURLResponse)?.statusCode == 200)
        #expect(
            breaker.key(for: URLRequest(url: URL(string: "http://stub.invalid/fine")!), endpoint: fine)
                == "http://stub.invalid:80 GET /fine"
        )
    }

    @Test func concurrentFailuresOpenTheCircuitExactlyOnce() async throws {
        let stub = StubTransport(fallback: .status(503))
        let clock = ManualClock()
        let breaker = CircuitBreakerPlugin.circuitBreaker(Self.small(minimumCalls: 20), clock: clock)
        let provider = Self.provider(stub, [breaker])
        let log = EventRecorder()
        try await log.observing {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<200 {
                    group.addTask { _ = try? await provider.request(endpoint: .stubbed) }
                }
                try await group.waitForAll()
            }
        }
        #expect(log.transitions == ["closed>open"])
        // Calls already past the breaker when it opened still reach the stub; none started after it.
        #expect(stub.requests.count >= 20)
        #expect(stub.requests.count < 200)
        #expect(log.events.filter { $0.name == "rejected" }.count == 200 - stub.requests.count)
    }
}
