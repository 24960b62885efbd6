import Foundation
import NetworkAgent
import NetworkAgentAuth
import NetworkAgentCircuitBreaker
import NetworkAgentDiskCache
import NetworkAgentLogging
import NetworkAgentMetrics
import NetworkAgentRetry
import NetworkAgentTestServer
import NetworkAgentTestSupport
import NetworkAgentTesting
import NetworkAgentTokenRefresh
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A flapping origin on the loopback server, over the transport of the run (`TestTransport.kind`): it fails for a
/// while, then heals. The breaker's clock is a `ManualClock`, so the open interval passes when the test says.
@Suite struct CircuitBreakerOverTheWireTests {
    /// A server that answers 503 while `healthy` is false, 200 `ok` after.
    final class FlappingOrigin: Sendable {
        let healthy = Locked(false)
        let server: LoopbackServer

        init() throws {
            let healthy = healthy
            server = try LoopbackServer { _ in
                healthy.withLock { $0 } ? .text("ok") : .text("down", status: 503)
            }
        }

        var endpoint: BreakerEndpoint { BreakerEndpoint(baseURL: server.baseURL) }
        var key: String { "http://127.0.0.1:\(server.baseURL.port ?? 0)" }
    }

    static let configuration = CircuitBreakerPlugin.Configuration(
        window: .count(4),
        minimumCalls: 4,
        openInterval: .seconds(30),
        openIntervalJitter: 0,
        probeCalls: 2
    )

    static func provider(_ plugins: [any NetworkAgentPlugin]) -> NetworkAgentProvider<BreakerEndpoint> {
        NetworkAgentProvider(plugins: plugins, agent: NetworkAgent(transport: TestTransport.make()))
    }

    @Test func aFlappingOriginOpensTheCircuitWhichClosesOnceItHeals() async throws {
        let origin = try FlappingOrigin()
        defer { origin.server.stop() }
        let clock = ManualClock()
        let breaker = CircuitBreakerPlugin.circuitBreaker(Self.configuration, clock: clock)
        let provider = Self.provider([breaker])
        let log = EventRecorder()
        for _ in 0..<4 {
            let (_, response) = try await log.observing { try await provider.request(endpoint: origin.endpoint) }
            #expect((response as? HTTPURLResponse)?.statusCode == 503)
        }
        // Open: fail fast, nothing reaches the origin, even once it has healed.
        origin.healthy.withLock { $0 = true }
        for _ in 0..<5 {
            await expectFailFast { try await log.observing { try await provider.request(endpoint: origin.endpoint) } }
        }
        #expect(origin.server.requestCount == 4)
        // After the open interval two probes go through, and close the circuit.
        clock.advance(by: .seconds(30))
        for _ in 0..<5 {
            let (data, _) = try await log.observing { try await provider.request(endpoint: origin.endpoint) }
            #expect(String(decoding: data, as: UTF8.self) == "ok")
        }
        #expect(origin.server.requestCount == 9)
        #expect(log.transitions == ["closed>open", "open>half_open", "half_open>closed"])
        #expect(breaker.state(forKey: origin.key) == .closed)
    }

    @Test func retryNeverRetriesAFailFast() async throws {
        let origin = try FlappingOrigin()
        defer { origin.server.stop() }
        var configuration = Self.configuration
        configuration.window = .count(2)
        configuration.minimumCalls = 2
        let provider = Self.provider([
            .retry(.init(maximumAttempts: 5), clock: ManualClock(advancesOnSleep: true)),
            .circuitBreaker(configuration, clock: ManualClock()),
        ])
        // Two 503s open the circuit; the retry plugin's third attempt fails fast and is not retried.
        let error = await #expect(throws: NetworkAgentError.self) {
            try await provider.request(endpoint: origin.endpoint)
        }
        #expect(error?.code == .circuitOpen)
        #expect(error?.circuitBreakerError?.code == .open)
        #expect(origin.server.requestCount == 2)
    }

    @Test func anOpenCircuitLeavesOtherHostsAndSideRequestsAlone() async throws {
        let failing = try FlappingOrigin()
        defer { failing.server.stop() }
        let other = try FlappingOrigin()
        defer { other.server.stop() }
        other.healthy.withLock { $0 = true }
        let breaker = CircuitBreakerPlugin.circuitBreaker(Self.configuration, clock: ManualClock())
        let agent = NetworkAgent(transport: TestTransport.make())
        let provider = NetworkAgentProvider<BreakerEndpoint>(plugins: [breaker], agent: agent)
        for _ in 0..<4 { _ = try await provider.request(endpoint: failing.endpoint) }
        await expectFailFast { try await provider.request(endpoint: failing.endpoint) }
        // Another host (a token endpoint, an auth server) is on its own circuit. The loopback servers share
        // 127.0.0.1 and differ by port, which is part of the key.
        let (data, _) = try await provider.request(endpoint: other.endpoint)
        #expect(String(decoding: data, as: UTF8.self) == "ok")
        // A side request (what a token refresher sends) goes through the agent, not the chain: no breaker at all.
        failing.healthy.withLock { $0 = true }
        let (side, _) = try await agent.request(failing.endpoint)
        #expect(String(decoding: side, as: UTF8.self) == "ok")
        #expect(breaker.state(forKey: failing.key) == .open)
    }

    @Test func theCacheAnswersStaleWhileTheCircuitIsOpen() async throws {
        let origin = try FlappingOrigin()
        defer { origin.server.stop() }
        origin.healthy.withLock { $0 = true }
        let wall = ManualClock()
        let cache = DiskCachePlugin(
            store: MemoryStore(),
            configuration: DiskCachePlugin.Configuration(statusHeader: "X-Cache", now: { wall.date })
        )
        let breaker = CircuitBreakerPlugin.circuitBreaker(Self.configuration, clock: ManualClock())
        // Outermost first: retry, then the cache, then the breaker next to the transport.
        let provider = Self.provider([
            .retry(.init(maximumAttempts: 1), clock: ManualClock(advancesOnSleep: true)), cache, breaker,
        ])
        var endpoint = origin.endpoint
        endpoint.path = "/kept"
        // The origin's answer is fresh for a second, and may be served stale on errors for five minutes.
        let server = try LoopbackServer { _ in
            origin.healthy.withLock { $0 }
                ? ServerResponse(
                    status: 200,
                    headers: [("Cache-Control", "max-age=1, stale-if-error=300"), ("Date", Self.httpDate(wall.date))],
                    body: .data(Data("kept".utf8))
                )
                : .text("down", status: 503)
        }
        defer { server.stop() }
        endpoint.baseURL = server.baseURL
        _ = try await provider.request(endpoint: endpoint)
        wall.advance(by: .seconds(10))
        origin.healthy.withLock { $0 = false }
        // The window holds the first success and three 503s (each answered stale by the cache): 75 % opens it.
        for _ in 0..<3 {
            let (data, _) = try await provider.request(endpoint: endpoint)
            #expect(String(decoding: data, as: UTF8.self) == "kept")
        }
        #expect(breaker.state(forKey: "http://127.0.0.1:\(server.baseURL.port ?? 0)") == .open)
        // The circuit is open: the call fails fast below the cache, which answers it with the stale copy.
        let (data, response) = try await provider.request(endpoint: endpoint)
        #expect(String(decoding: data, as: UTF8.self) == "kept")
        #expect((response as? HTTPURLResponse)?.value(forHTTPHeaderField: "X-Cache") == "stale")
        #expect(server.requestCount == 4)
    }

    @Test func metricsExportTheStatePerKeyAndTheTransitions() async throws {
        let origin = try FlappingOrigin()
        defer { origin.server.stop() }
        let registry = MetricsRegistry()
        let clock = ManualClock()
        let provider = Self.provider([.metrics(registry), .circuitBreaker(Self.configuration, clock: clock)])
        for _ in 0..<5 { _ = try? await provider.request(endpoint: origin.endpoint) }
        var snapshot = registry.snapshot()
        #expect(snapshot.value("networkagent_circuit_breaker_state", ["key": origin.key, "state": "open"]) == 1)
        #expect(
            snapshot.value(
                "networkagent_circuit_breaker_transitions_total",
                ["key": origin.key, "from": "closed", "to": "open"]
            ) == 1
        )
        #expect(snapshot.total("networkagent_plugin_events_total", matching: ["name": "rejected"]) == 1)
        origin.healthy.withLock { $0 = true }
        clock.advance(by: .seconds(30))
        for _ in 0..<2 { _ = try await provider.request(endpoint: origin.endpoint) }
        snapshot = registry.snapshot()
        #expect(snapshot.value("networkagent_circuit_breaker_state", ["key": origin.key, "state": "closed"]) == 1)
        #expect(snapshot.total("networkagent_circuit_breaker_transitions_total", matching: ["key": origin.key]) == 3)
    }

    @Test func loggingShowsEveryTransitionAndEachFailFast() async throws {
        let origin = try FlappingOrigin()
        defer { origin.server.stop() }
        let clock = ManualClock()
        let log = Locked<[LogRecord]>([])
        let provider = Self.provider([
            .logging(.basic, sink: LogSink { record in log.withLock { $0.append(record) } }),
            .circuitBreaker(Self.configuration, clock: clock),
        ])
        for _ in 0..<5 { _ = try? await provider.request(endpoint: origin.endpoint) }
        origin.healthy.withLock { $0 = true }
        clock.advance(by: .seconds(30))
        for _ in 0..<2 { _ = try await provider.request(endpoint: origin.endpoint) }
        let records = log.withLock { $0 }
        let changes = records.filter { $0.metadata["event"] == "circuit_breaker.state_changed" }
        #expect(
            changes.map { "\($0.metadata["event.from"] ?? "?")>\($0.metadata["event.to"] ?? "?")" }
                == ["closed>open", "open>half_open", "half_open>closed"]
        )
        #expect(changes.allSatisfy { $0.metadata["event.key"] == origin.key && $0.kind == .event })
        #expect(changes.first?.message.contains("open_ms=30000") == true, "\(changes.first?.message ?? "")")
        // The fifth call failed fast: its failure line and the breaker's event both say so.
        #expect(records.filter { $0.metadata["event"] == "circuit_breaker.rejected" }.count == 1)
        let failures = records.filter { $0.kind == .failure }
        #expect(failures.count == 1)
        #expect(failures.first?.message.contains("is open for another 30000 ms") == true, "\(failures)")
    }

    /// A token refresh goes to the token host through the agent, not the chain: the token host's circuit being open
    /// (its API fails) does not stop it, and the API host's call succeeds with the new token.
    @Test func tokenRefreshIsNotBrokenByAnOpenCircuitOnTheTokenHost() async throws {
        let tokenHost = try LoopbackServer { request in
            request.path == "/token" ? .text("t1") : .text("down", status: 503)
        }
        defer { tokenHost.stop() }
        let api = try LoopbackServer { request in
            request.header("Authorization") == "Bearer t1"
                ? .text("ok")
                : .text("expired", status: 401, headers: [("WWW-Authenticate", "Bearer error=\"invalid_token\"")])
        }
        defer { api.stop() }
        let tokenURL = tokenHost.baseURL.appendingPathComponent("token")
        let refresher = TokenRefresher(token: AuthToken(credential: .bearer("t0"))) { agent, _ in
            let (data, _) = try await agent.send(URLRequest(url: tokenURL))
            return AuthToken(credential: .bearer(String(decoding: data, as: UTF8.self)))
        }
        let breaker = CircuitBreakerPlugin.circuitBreaker(Self.configuration, clock: ManualClock())
        let provider = Self.provider([.tokenRefresh(refresher), breaker])
        let failing = BreakerEndpoint(baseURL: tokenHost.baseURL, path: "/api")
        for _ in 0..<4 { _ = try await provider.request(endpoint: failing) }
        await expectFailFast { try await provider.request(endpoint: failing) }
        let (data, _) = try await provider.request(endpoint: BreakerEndpoint(baseURL: api.baseURL, path: "/me"))
        #expect(String(decoding: data, as: UTF8.self) == "ok")
        #expect(tokenHost.requests.filter { $0.path == "/token" }.count == 1)
        #expect(breaker.state(forKey: "http://127.0.0.1:\(tokenHost.baseURL.port ?? 0)") == .open)
        #expect(breaker.state(forKey: "http://127.0.0.1:\(api.baseURL.port ?? 0)") == .closed)
    }

    static func httpDate(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter.string(from: date)
    }
}
