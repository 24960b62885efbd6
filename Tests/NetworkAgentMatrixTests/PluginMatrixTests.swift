import Foundation
import NetworkAgent
import NetworkAgentAuth
import NetworkAgentCircuitBreaker
import NetworkAgentDiskCache
import NetworkAgentGzip
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

/// Every plugin against every kind of exchange, over the loopback server, on ``matrixTransport()``.
///
/// Each cell builds one plugin (with the helpers its exchange needs: a retry plugin for `retried`, a side requester
/// for `sideRequest`), runs one exchange, and checks what that plugin must have done for it.
@Suite struct PluginMatrixTests {
    enum PluginKind: String, CaseIterable, Sendable {
        case logging, auth, tokenRefresh, retry, gzip, diskCache, metrics, circuitBreaker
    }

    enum ExchangeKind: String, CaseIterable, Sendable {
        case buffered, streamed, redirectedSameOrigin, redirectedOtherOrigin, failedMidBody, cancelled, retried
        case sideRequest
    }

    /// What the call gave back.
    struct Outcome: Sendable {
        var data: Data?
        var response: HTTPURLResponse?
        var error: (any Error)?

        var failureCode: NetworkAgentError.Code? { (error as? NetworkAgentError)?.code }
    }

    /// The secret the logging and auth cells send, which must never be logged nor cross origins.
    static let secret = "matrix-secret-7f3a"

    /// A retry that waits for nothing, so the matrix stays fast; two attempts.
    static let fastRetry = RetryPlugin.Policy(maximumAttempts: 2, baseDelay: .zero, maximumDelay: .zero, jitter: .none)

    /// What a cell inspects after its exchange.
    struct Probe {
        var log: Locked<[LogRecord]>?
        var registry: MetricsRegistry?
        var store: MemoryStore?
        var refreshes: Locked<Int>?
        var breaker: CircuitBreakerPlugin?
    }

    /// The breaker of the matrix: 1 failure in 2 calls (of the last 3) opens a circuit, which then stays open (its
    /// clock never moves), so that what an exchange counted can be read from the circuit's state (see
    /// ``counted(on:key:world:)``).
    static func matrixBreaker() -> CircuitBreakerPlugin {
        .circuitBreaker(
            .init(
                failureRateThreshold: 0.5,
                window: .count(3),
                minimumCalls: 2,
                openInterval: .seconds(60),
                openIntervalJitter: 0,
                probeCalls: 1
            ),
            clock: ManualClock()
        )
    }

    @Test(arguments: PluginKind.allCases, ExchangeKind.allCases)
    func cell(_ pluginKind: PluginKind, _ exchange: ExchangeKind) async throws {
        let world = try MatrixWorld(
            gzip: pluginKind == .gzip,
            requiredToken: pluginKind == .tokenRefresh ? "t1" : nil
        )
        var probe = Probe()
        let underTest: any NetworkAgentPlugin
        var headers: [String: String] = [:]
        switch pluginKind {
        case .logging:
            let log = Locked<[LogRecord]>([])
            probe.log = log
            headers["Authorization"] = "Bearer \(Self.secret)"
            underTest = .logging(
                .headers,
                logsCURLCommands: true,
                sink: LogSink { record in log.withLock { $0.append(record) } }
            )
        case .auth:
            underTest = .auth(.bearer(Self.secret))
        case .tokenRefresh:
            let refreshes = Locked(0)
            probe.refreshes = refreshes
            let refresher = TokenRefresher(token: AuthToken(credential: .bearer("t0"))) { _, _ in
                refreshes.withLock { $0 += 1 }
                return AuthToken(credential: .bearer("t1"))
            }
            underTest = .tokenRefresh(refresher)
        case .retry:
            underTest = .retry(Self.fastRetry)
        case .gzip:
            underTest = .gzip()
        case .diskCache:
            let store = MemoryStore()
            probe.store = store
            underTest = .cache(store: store)
        case .metrics:
            let registry = MetricsRegistry()
            probe.registry = registry
            underTest = .metrics(registry)
        case .circuitBreaker:
            let breaker = Self.matrixBreaker()
            probe.breaker = breaker
            underTest = breaker
        }
        let plugins = Self.chain(underTest, pluginKind, exchange, world)
        let provider = NetworkAgentProvider<MatrixEndpoint>(
            plugins: plugins,
            agent: NetworkAgent(transport: matrixTransport())
        )
        if pluginKind == .circuitBreaker, exchange == .sideRequest {
            // The side requests go to the other origin: open its circuit first.
            for _ in 0..<2 {
                _ = try await provider.request(
                    endpoint: MatrixEndpoint(baseURL: world.other.baseURL, path: "/always503")
                )
            }
        }
        let outcome = try await Self.run(exchange, provider, world, headers: headers)
        Self.expectCallOutcome(outcome, exchange)

        switch pluginKind {
        case .logging: try checkLogging(outcome, exchange, world, try #require(probe.log))
        case .auth: checkAuth(exchange, world, expected: "Bearer \(Self.secret)")
        case .tokenRefresh: try checkTokenRefresh(exchange, world, try #require(probe.refreshes))
        case .retry: try await checkRetry(outcome, exchange, world, provider)
        case .gzip: await checkGzip(outcome, exchange, world, provider)
        case .diskCache: try await checkDiskCache(exchange, world, provider, try #require(probe.store))
        case .metrics: try checkMetrics(exchange, try #require(probe.registry))
        case .circuitBreaker: try await checkCircuitBreaker(exchange, world, provider, try #require(probe.breaker))
        }
    }

    // MARK: - Chain and exchange

    /// The plugin under test, a fast retry where the exchange is `retried` (outside the plugins the recommended
    /// order puts after retry, inside the others), and a side requester innermost for `sideRequest`.
    static func chain(
        _ plugin: any NetworkAgentPlugin,
        _ kind: PluginKind,
        _ exchange: ExchangeKind,
        _ world: MatrixWorld
    ) -> [any NetworkAgentPlugin] {
        var plugins: [any NetworkAgentPlugin] = [plugin]
        if kind == .metrics, let metrics = plugin as? MetricsPlugin {
            // The same handlers once more, innermost: every attempt too.
            plugins.append(MetricsPlugin(handlers: metrics.handlers, level: .attempts))
        }
        if exchange == .retried, kind != .retry {
            let retry: any NetworkAgentPlugin = .retry(fastRetry)
            switch kind {
            case .metrics: plugins.insert(retry, at: 1)
            case .logging, .auth: plugins.append(retry)
            default: plugins.insert(retry, at: 0)
            }
        }
        if exchange == .sideRequest {
            // The breaker's side requests go to another host, whose circuit the cell opens first.
            let side =
                kind == .circuitBreaker
                ? world.other.baseURL.appendingPathComponent("data")
                : world.origin.baseURL.appendingPathComponent("side")
            plugins.append(SideRequester(url: side))
        }
        return plugins
    }

    static func run(
        _ exchange: ExchangeKind,
        _ provider: NetworkAgentProvider<MatrixEndpoint>,
        _ world: MatrixWorld,
        headers: [String: String]
    ) async throws -> Outcome {
        func call(_ path: String) async -> Outcome {
            do {
                let (data, response) = try await provider.request(endpoint: world.endpoint(path, headers: headers))
                return Outcome(data: data, response: response as? HTTPURLResponse)
            } catch {
                return Outcome(error: error)
            }
        }
        switch exchange {
        case .buffered, .sideRequest: return await call("/data")
        case .redirectedSameOrigin: return await call("/moved")
        case .redirectedOtherOrigin: return await call("/away")
        case .failedMidBody: return await call("/broken")
        case .retried: return await call("/flaky")
        case .streamed:
            do {
                let stream = try await provider.stream(endpoint: world.endpoint("/stream", headers: headers))
                var body = Data()
                for try await chunk in stream.body { body.append(chunk) }
                return Outcome(data: body, response: stream.response)
            } catch {
                return Outcome(error: error)
            }
        case .cancelled:
            let task = Task { await call("/stall") }
            let reached = await eventually { world.stalls >= 1 }
            task.cancel()
            try #require(reached, "the request never reached the server")
            return await task.value
        }
    }

    /// The call succeeds with the payload where the exchange does, fails where it must.
    static func expectCallOutcome(_ outcome: Outcome, _ exchange: ExchangeKind) {
        switch exchange {
        case .failedMidBody:
            #expect(outcome.error != nil, "a body cut short must fail the call")
            #expect(outcome.failureCode != .cancelled)
        case .cancelled:
            #expect(outcome.failureCode == .cancelled, "\(String(describing: outcome.error))")
        default:
            #expect(outcome.error == nil, "\(String(describing: outcome.error))")
            #expect(outcome.data == MatrixWorld.payload)
            #expect(outcome.response?.statusCode == 200)
        }
    }

    /// How many exchanges with a server the call made (hops and attempts), for time-to-headers counts.
    static func serverExchanges(_ exchange: ExchangeKind) -> Int {
        switch exchange {
        case .buffered, .streamed: 1
        case .redirectedSameOrigin, .redirectedOtherOrigin, .retried, .sideRequest: 2
        case .failedMidBody: 1
        case .cancelled: 0
        }
    }

    // MARK: - Logging

    func checkLogging(
        _ outcome: Outcome,
        _ exchange: ExchangeKind,
        _ world: MatrixWorld,
        _ log: Locked<[LogRecord]>
    ) throws {
        let records = log.withLock { $0 }
        func count(_ kind: LogRecord.Kind) -> Int { records.filter { $0.kind == kind }.count }
        let text = records.map { $0.message + " " + $0.metadata.values.sorted().joined(separator: " ") }
            .joined(separator: "\n")
        #expect(!text.contains(Self.secret), "the secret was logged:\n\(text)")
        #expect(count(.request) == 1)
        #expect(count(.curl) == 1)
        let request = try #require(records.first { $0.kind == .request })
        #expect(request.message.contains(world.origin.baseURL.absoluteString))
        switch exchange {
        case .failedMidBody, .cancelled:
            #expect(count(.response) == 0)
            #expect(count(.failure) == 1)
        case .streamed:
            #expect(count(.response) == 1)
            #expect(count(.streamEnd) == 1)
            #expect(count(.failure) == 0)
        default:
            #expect(count(.response) == 1)
            #expect(count(.failure) == 0)
            #expect(count(.streamEnd) == 0)
        }
        if exchange == .retried {
            #expect(records.contains { $0.kind == .event && $0.message.contains("retry_scheduled") })
        }
        if exchange == .sideRequest {
            // The side request skips the chain: never logged as a request of its own.
            #expect(!records.contains { $0.kind == .request && $0.message.contains("/side") })
        }
    }

    // MARK: - Auth

    func checkAuth(_ exchange: ExchangeKind, _ world: MatrixWorld, expected: String) {
        let own = world.origin.requests.filter { $0.path != "/side" }
        #expect(!own.isEmpty)
        for request in own {
            #expect(request.header("Authorization") == expected, "\(request.path)")
        }
        // Another origin and a side request (no chain) never get the credential.
        #expect(world.other.requests.allSatisfy { $0.header("Authorization") == nil })
        #expect(world.requests("/side").allSatisfy { $0.header("Authorization") == nil })
        switch exchange {
        case .redirectedOtherOrigin: #expect(world.other.requests.map(\.path) == ["/data"])
        case .redirectedSameOrigin: #expect(own.map(\.path) == ["/moved", "/data"])
        case .retried: #expect(own.map(\.path) == ["/flaky", "/flaky"])
        case .sideRequest: #expect(world.requests("/side").count == 1)
        default: #expect(own.count == 1)
        }
    }

    // MARK: - Token refresh

    func checkTokenRefresh(_ exchange: ExchangeKind, _ world: MatrixWorld, _ refreshes: Locked<Int>) throws {
        // t0 is rejected once, refreshed once to t1, and the call re-sent with t1.
        #expect(refreshes.withLock { $0 } == 1)
        let own = world.origin.requests.filter { $0.path != "/side" }
        let first = try #require(own.first)
        #expect(first.header("Authorization") == "Bearer t0")
        #expect(own.filter { $0.header("Authorization") == "Bearer t0" }.count == 1)
        #expect(own.dropFirst().allSatisfy { $0.header("Authorization") == "Bearer t1" })
        #expect(world.other.requests.allSatisfy { $0.header("Authorization") == nil })
        #expect(world.requests("/side").allSatisfy { $0.header("Authorization") == nil })
        switch exchange {
        case .redirectedSameOrigin: #expect(own.map(\.path) == ["/moved", "/moved", "/data"])
        case .redirectedOtherOrigin:
            #expect(own.map(\.path) == ["/away", "/away"])
            #expect(world.other.requests.map(\.path) == ["/data"])
        case .retried: #expect(own.map(\.path) == ["/flaky", "/flaky", "/flaky"])
        default: #expect(own.count == 2)
        }
    }

    // MARK: - Retry

    func checkRetry(
        _ outcome: Outcome,
        _ exchange: ExchangeKind,
        _ world: MatrixWorld,
        _ provider: NetworkAgentProvider<MatrixEndpoint>
    ) async throws {
        switch exchange {
        case .retried:
            #expect(world.requests("/flaky").count == 2)
            // A POST that gets a 503 is never retried (no Idempotency-Key): its 503 comes back after one attempt.
            let (_, response) = try await provider.request(
                endpoint: world.endpoint("/always503", method: .post)
            )
            #expect((response as? HTTPURLResponse)?.statusCode == 503)
            #expect(world.requests("/always503").count == 1)
            // The same for a GET: retried up to the policy's attempts, then the last 503 is handed back.
            let (_, again) = try await provider.request(endpoint: world.endpoint("/always503"))
            #expect((again as? HTTPURLResponse)?.statusCode == 503)
            #expect(world.requests("/always503").count == 1 + Self.fastRetry.maximumAttempts)
        case .failedMidBody:
            // A body that broke off is a lost connection on every transport, which the policy retries for a GET: every
            // attempt is made, and the last one's error comes back.
            try #require(Self.fastRetry.retryableURLErrorCodes.contains(.networkConnectionLost))
            #expect(outcome.failureCode == .transport, "\(String(describing: outcome.error))")
            #expect(
                (outcome.error as? NetworkAgentError)?.urlErrorCode == .networkConnectionLost,
                "\(String(describing: outcome.error))"
            )
            #expect(world.requests("/broken").count == Self.fastRetry.maximumAttempts)
        case .cancelled:
            #expect(world.requests("/stall").count == 1, "a cancelled call is never retried")
        case .redirectedSameOrigin:
            #expect(world.origin.requests.map(\.path) == ["/moved", "/data"])
        case .redirectedOtherOrigin:
            #expect(world.origin.requests.map(\.path) == ["/away"])
            #expect(world.other.requests.map(\.path) == ["/data"])
        case .sideRequest:
            #expect(world.origin.requests.map(\.path) == ["/side", "/data"])
        case .buffered:
            #expect(world.origin.requests.map(\.path) == ["/data"])
        case .streamed:
            #expect(world.origin.requests.map(\.path) == ["/stream"])
        }
    }

    // MARK: - Gzip

    func checkGzip(
        _ outcome: Outcome,
        _ exchange: ExchangeKind,
        _ world: MatrixWorld,
        _ provider: NetworkAgentProvider<MatrixEndpoint>
    ) async {
        // expectCallOutcome checked that the caller got the payload as it was before encoding, streamed or not;
        // what is left is that the headers describe it, and that a gzip stream cut short fails.
        switch exchange {
        case .failedMidBody:
            // /broken: the gzip body is cut short on the wire (fewer bytes than its Content-Length), which every
            // transport sees: a lost connection.
            #expect(world.gzipResponses("/broken") == 1, "the server did not encode the body it cut short")
            #expect(
                (outcome.error as? NetworkAgentError)?.urlErrorCode == .networkConnectionLost,
                "\(String(describing: outcome.error))"
            )
            // /truncated: the HTTP framing is intact and the gzip stream inside is cut in half.
            let truncated: Result<Data, any Error>
            do {
                truncated = .success(try await provider.request(endpoint: world.endpoint("/truncated")).data)
            } catch {
                truncated = .failure(error)
            }
            switch TestTransport.kind {
            case .urlSession:
                // libcurl inside URLSession inflates the half it has and reports no error; nothing it exposes tells
                // the library the stream was unfinished, so the call is a short 200 (documented in Docs/Gzip.md,
                // "Truncated bodies").
                let data = try? truncated.get()
                #expect(data.map { !$0.isEmpty && $0.count < MatrixWorld.payload.count } == true)
                #expect(data.map { MatrixWorld.payload.starts(with: $0) } == true)
            case .curl:
                // The plugin sees the compressed bytes and finds the stream unfinished.
                #expect(throws: NetworkAgentError.self) { try truncated.get() }
                if case .failure(let error as NetworkAgentError) = truncated {
                    #expect(error.code == .invalidResponse)
                    #expect((error.underlying as? GzipPlugin.Error)?.code == .truncatedInput, "\(error)")
                }
            }
        case .cancelled:
            break
        case .buffered:
            // The cell did exercise the plugin: the server encoded the body, and the plugin's header fix reached the
            // caller: no Content-Encoding, and the Content-Length of the decoded body (URLSession keeps both headers
            // of the compressed body, so neither holds without the plugin).
            #expect(world.gzipResponses("/data") == 1, "the server did not encode the body")
            let accepted = world.requests("/data").first?.header("Accept-Encoding")
            switch TestTransport.kind {
            case .curl:
                // CurlTransport asks for no coding: the plugin asked for gzip.
                #expect(accepted == GzipPlugin.acceptEncoding)
            case .urlSession:
                // libcurl asks for every coding it decodes, and the plugin adds nothing on top.
                #expect(accepted?.contains("gzip") == true)
            }
            #expect(outcome.response?.value(forHTTPHeaderField: "Content-Encoding") == nil)
            #expect(
                outcome.response?.value(forHTTPHeaderField: "Content-Length") == "\(MatrixWorld.payload.count)"
            )
        case .streamed:
            #expect(outcome.data == MatrixWorld.payload, "the streamed gzip body reached the caller encoded")
        default:
            #expect(outcome.response?.value(forHTTPHeaderField: "Content-Encoding") == nil)
        }
    }

    // MARK: - Disk cache

    func checkDiskCache(
        _ exchange: ExchangeKind,
        _ world: MatrixWorld,
        _ provider: NetworkAgentProvider<MatrixEndpoint>,
        _ store: MemoryStore
    ) async throws {
        let entries = store.usage.entryCount
        /// Requests `path` again and tells whether it was answered from the store (the server saw nothing new).
        func isHit(_ endpoint: MatrixEndpoint, on server: LoopbackServer) async throws -> Bool {
            let before = server.requestCount
            let (data, response) = try await provider.request(endpoint: endpoint)
            #expect(data == MatrixWorld.payload)
            #expect((response as? HTTPURLResponse)?.statusCode == 200)
            return server.requestCount == before
        }
        switch exchange {
        case .buffered, .sideRequest:
            #expect(entries == 1, "only the call's own 2xx is stored")
            #expect(try await isHit(world.endpoint("/data"), on: world.origin))
        case .streamed:
            #expect(entries == 0, "a streamed body is never stored")
            #expect(try await !isHit(world.endpoint("/stream"), on: world.origin))
        case .redirectedSameOrigin:
            // Filed under the final URL: /data is a hit, /moved still asks the network.
            #expect(entries == 1)
            #expect(try await isHit(world.endpoint("/data"), on: world.origin))
            #expect(try await !isHit(world.endpoint("/moved"), on: world.origin))
        case .redirectedOtherOrigin:
            #expect(entries == 1)
            let final = MatrixEndpoint(baseURL: world.other.baseURL, path: "/data")
            #expect(try await isHit(final, on: world.other))
        case .failedMidBody, .cancelled:
            #expect(entries == 0, "a failed body is never stored")
        case .retried:
            // The 503 is not stored, the 200 of the retry is.
            #expect(entries == 1)
            #expect(try await isHit(world.endpoint("/flaky"), on: world.origin))
        }
    }

    // MARK: - Metrics

    func checkMetrics(_ exchange: ExchangeKind, _ registry: MetricsRegistry) throws {
        let snapshot = registry.snapshot()
        let route = ["route": "MatrixEndpoint", "method": "GET"]
        #expect(snapshot.total("networkagent_requests_total") == 1, "each call counted once")
        #expect(registry.inFlight == 0)
        let samples = snapshot.family("networkagent_requests_total")?.samples ?? []
        let outcome = try #require(samples.first?.labels["outcome"])
        switch exchange {
        case .failedMidBody:
            #expect(outcome.hasPrefix("transport_error"), "\(outcome)")
        case .cancelled:
            #expect(outcome == "cancelled")
            #expect(samples.first?.labels["status_class"] == "none")
        default:
            #expect(outcome == "success")
            #expect(samples.first?.labels["status_class"] == "2xx")
            let received = try #require(snapshot.histogram("networkagent_response_body_bytes", route))
            #expect(received.sum == Double(MatrixWorld.payload.count))
        }
        // Once per exchange that received headers, also when its body then broke off (failedMidBody).
        let headers = snapshot.histogram("networkagent_response_headers_seconds", route)?.count ?? 0
        #expect(headers == UInt64(Self.serverExchanges(exchange)))
        #expect(snapshot.total("networkagent_retries_total") == (exchange == .retried ? 1 : 0))
        // Attempts: one per send, the retried call's 503 as an http_error.
        let attempts = (snapshot.family("networkagent_attempts_total")?.samples ?? []).map {
            "\($0.labels["status_class"] ?? "?") \($0.labels["outcome"] ?? "?") \(Int($0.value))"
        }
        switch exchange {
        case .retried: #expect(attempts == ["2xx success 1", "5xx http_error 1"])
        case .cancelled: #expect(attempts == ["none cancelled 1"])
        case .failedMidBody:
            #expect(attempts.count == 1)
            #expect(attempts.first?.contains("transport_error") == true)
        default: #expect(attempts == ["2xx success 1"])
        }
        // URLSession measures no transfer phases; another transport may.
        if TestTransport.kind == .urlSession {
            #expect(snapshot.family("networkagent_transfer_phase_seconds")?.samples.isEmpty == true)
        }
    }

    // MARK: - Circuit breaker

    /// What an exchange counted on a circuit of ``matrixBreaker()``.
    enum Counted: Equatable {
        /// Two calls, one of them a failure: the circuit opened.
        case opened
        case failure
        case success
        /// Nothing: a cancelled call says nothing about the origin.
        case ignored
    }

    /// Reads what the calls so far counted on the origin's circuit, from its state: open already (two calls, one
    /// failed); else a 200 opens it only after a counted failure; else a 503 opens it only when nothing was counted.
    func counted(
        on provider: NetworkAgentProvider<MatrixEndpoint>,
        breaker: CircuitBreakerPlugin,
        world: MatrixWorld
    ) async -> Counted {
        let key = breaker.key(for: URLRequest(url: world.origin.baseURL), endpoint: world.endpoint("/data"))
        if breaker.state(forKey: key) == .open { return .opened }
        _ = try? await provider.request(endpoint: world.endpoint("/data"))
        if breaker.state(forKey: key) == .open { return .failure }
        _ = try? await provider.request(endpoint: world.endpoint("/always503"))
        return breaker.state(forKey: key) == .open ? .ignored : .success
    }

    func checkCircuitBreaker(
        _ exchange: ExchangeKind,
        _ world: MatrixWorld,
        _ provider: NetworkAgentProvider<MatrixEndpoint>,
        _ breaker: CircuitBreakerPlugin
    ) async throws {
        let counted = await counted(on: provider, breaker: breaker, world: world)
        switch exchange {
        case .buffered, .redirectedSameOrigin:
            #expect(counted == .success)
        case .streamed:
            // Counted when the caller read the body to its end.
            #expect(counted == .success)
        case .redirectedOtherOrigin:
            // One call, on the origin's circuit: the redirect is the transport's.
            #expect(counted == .success)
        case .failedMidBody:
            #expect(counted == .failure, "a body cut short is the origin's failure")
            // The same body cut short in a streamed call counts too, once the caller meets the break.
            let fresh = Self.matrixBreaker()
            let streaming = NetworkAgentProvider<MatrixEndpoint>(
                plugins: [fresh],
                agent: NetworkAgent(transport: matrixTransport())
            )
            let stream = try await streaming.stream(endpoint: world.endpoint("/broken"))
            await #expect(throws: (any Error).self) {
                for try await _ in stream.body {}
            }
            #expect(await self.counted(on: streaming, breaker: fresh, world: world) == .failure)
        case .cancelled:
            #expect(counted == .ignored, "a cancellation is not the origin's failure")
        case .retried:
            // Every attempt passed the breaker: the 503 and the 200 are 1 failure in 2 calls, which opened it, and the
            // next call fails fast, unsent.
            #expect(counted == .opened)
            let before = world.origin.requestCount
            let error = await #expect(throws: NetworkAgentError.self) {
                try await provider.request(endpoint: world.endpoint("/data"))
            }
            #expect(error?.code == .circuitOpen)
            #expect(world.origin.requestCount == before)
        case .sideRequest:
            #expect(counted == .success, "a side request is not counted")
            // The other origin's circuit is open, yet each call's side request to it (through the agent, not the
            // chain) goes out and the call succeeds; a call through the chain to it fails fast.
            let other = MatrixEndpoint(baseURL: world.other.baseURL, path: "/data")
            let otherKey = breaker.key(for: URLRequest(url: world.other.baseURL), endpoint: other)
            #expect(breaker.state(forKey: otherKey) == .open)
            let sideRequests = world.other.requests.count
            let (data, _) = try await provider.request(endpoint: world.endpoint("/data"))
            #expect(data == MatrixWorld.payload)
            #expect(world.other.requests.count == sideRequests + 1)
            let error = await #expect(throws: NetworkAgentError.self) { try await provider.request(endpoint: other) }
            #expect(error?.code == .circuitOpen)
        }
    }
}
