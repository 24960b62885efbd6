import Foundation
import NetworkAgent
import NetworkAgentMetrics
import NetworkAgentTestServer
import NetworkAgentTestSupport
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The metrics plugin with the real transport of the run (`TestTransport.kind`) against the loopback server.
@Suite struct MetricsOverTheWireTests {
    /// A transport that opens as many connections to one host as the tests run requests at once, so that requests do
    /// not queue inside the transport and their durations are the server's.
    static let transport = TestTransport.make(maximumConnectionsPerHost: 64)

    static let agent = NetworkAgent(transport: transport)

    func labels(_ route: String, _ statusClass: String, _ outcome: String) -> [String: String] {
        labels(route, "GET", statusClass, outcome)
    }

    func labels(_ route: String, _ method: String, _ statusClass: String, _ outcome: String) -> [String: String] {
        ["route": route, "method": method, "status_class": statusClass, "outcome": outcome]
    }

    /// 200 requests, 32 at a time: half answered at once, half after 400 ms; buckets 0.2 s / 2 s / 10 s.
    ///
    /// Where each one lands is checked against bounds the test knows independently: a request cannot take less
    /// than its server delay, nor longer than the test itself saw from outside. On a quiet machine the two agree and
    /// the check is exact (every fast request at or below 0.2 s, every slow one above); on a machine busy enough to
    /// stretch a fast request past 0.2 s, it is placed by the time it really took.
    @Test func countsAndBucketsUnderConcurrentLoad() async throws {
        let slowDelay = 0.4
        let server = try LoopbackServer { request in
            var response = ServerResponse.text("0123456789")
            if request.path.hasPrefix("/slow") { response.delay = .milliseconds(Int64(slowDelay * 1000)) }
            return response
        }
        defer { server.stop() }
        let bounds = [0.2, 2, 10]
        let registry = MetricsRegistry(configuration: MetricsConfiguration(durationBuckets: bounds))
        let provider = NetworkAgentProvider<LoadApi>(plugins: [.metrics(registry)], agent: Self.agent)

        let total = 200
        let concurrency = 32
        // The duration of each request as seen from outside the chain, by route.
        let seen = try await withThrowingTaskGroup(of: (route: String, seconds: Double).self) { group in
            var seen: [String: [Double]] = [:]
            for index in 0..<total {
                if index >= concurrency, let done = try await group.next() {
                    seen[done.route, default: []].append(done.seconds)
                }
                group.addTask {
                    let slow = !index.isMultiple(of: 2)
                    let endpoint: LoadApi =
                        slow ? .slow(base: server.baseURL, id: index) : .fast(base: server.baseURL, id: index)
                    let start = ContinuousClock.now
                    _ = try await provider.request(endpoint: endpoint)
                    return (slow ? "slow" : "fast", (ContinuousClock.now - start) / .seconds(1))
                }
            }
            for try await done in group { seen[done.route, default: []].append(done.seconds) }
            return seen
        }

        let snapshot = registry.snapshot()
        #expect(server.requestCount == total)
        #expect(snapshot.value("networkagent_requests_total", labels("fast", "2xx", "success")) == 100)
        #expect(snapshot.value("networkagent_requests_total", labels("slow", "2xx", "success")) == 100)
        #expect(snapshot.total("networkagent_requests_total") == Double(total))
        #expect(snapshot.value("networkagent_requests_in_flight") == 0)

        for (route, minimum) in [("fast", 0.0), ("slow", slowDelay)] {
            let outside = seen[route] ?? []
            #expect(outside.count == 100)
            let duration = try #require(
                snapshot.histogram("networkagent_request_duration_seconds", ["route": route, "method": "GET"])
            )
            #expect(duration.count == 100)
            #expect(duration.sum >= minimum * 100 && duration.sum <= outside.reduce(0, +))
            for bound in bounds {
                // At least the requests seen to finish within the bound; at most those that could have.
                let atLeast = UInt64(outside.filter { $0 <= bound }.count)
                let atMost: UInt64 = minimum <= bound ? 100 : 0
                let placed = try #require(duration.cumulativeCount(le: bound))
                #expect(placed >= atLeast && placed <= atMost, "\(route) le=\(bound): \(placed)")
            }
            // Time to headers: after the server's delay, before the request ended.
            let headers = try #require(
                snapshot.histogram("networkagent_response_headers_seconds", ["route": route, "method": "GET"])
            )
            #expect(headers.count == 100)
            #expect(headers.sum >= minimum * 100 && headers.sum <= duration.sum)

            let latency = try #require(snapshot.latency(route: route, method: "GET"))
            #expect(latency.count == 100)
            let p50 = try #require(latency.p50)
            let p99 = try #require(latency.p99)
            #expect(p50 >= minimum && p50 <= p99 && p99 <= (outside.max() ?? 0))
        }
        let received = try #require(
            snapshot.histogram("networkagent_response_body_bytes", ["route": "fast", "method": "GET"])
        )
        #expect(received.sum == 1000)
        #expect(received.cumulativeCount(le: 64) == 100)
        #expect(snapshot.overallLatency.count == total)
    }

    @Test func inFlightGaugeFollowsRequestsAndReturnsToZero() async throws {
        let release = DispatchSemaphore(value: 0)
        let server = try LoopbackServer { _ in
            release.wait()
            return .text("done")
        }
        let count = 8
        defer {
            // Frees the handlers even when an expectation below fails (extra signals are harmless).
            for _ in 0..<count { release.signal() }
            server.stop()
        }
        let registry = MetricsRegistry()
        let provider = NetworkAgentProvider<LoadApi>(plugins: [.metrics(registry)], agent: Self.agent)
        let requests = (0..<count).map { index in
            Task { try await provider.request(endpoint: .fast(base: server.baseURL, id: index)) }
        }
        #expect(await eventually { server.requestCount == count })
        #expect(registry.inFlight == count)
        #expect(registry.snapshot().value("networkagent_requests_in_flight") == Double(count))
        for _ in 0..<count { release.signal() }
        for request in requests { _ = try await request.value }
        #expect(registry.inFlight == 0)
        #expect(registry.snapshot().value("networkagent_requests_in_flight") == 0)
    }

    @Test func serverErrorIsAnHTTPErrorOfClass5xxEvenWhenValidateThrows() async throws {
        let server = try LoopbackServer { _ in .text("boom", status: 500) }
        defer { server.stop() }
        let registry = MetricsRegistry()
        let provider = NetworkAgentProvider<LoadApi>(plugins: [.metrics(registry), .validate()], agent: Self.agent)
        await #expect(throws: NetworkAgentError.self) {
            try await provider.request(endpoint: .status(base: server.baseURL, code: 500))
        }
        let snapshot = registry.snapshot()
        #expect(snapshot.value("networkagent_requests_total", labels("status", "5xx", "http_error")) == 1)
        #expect(snapshot.total("networkagent_requests_total") == 1)
        #expect(registry.inFlight == 0)
    }

    @Test func refusedConnectionIsATransportErrorOfThatKind() async throws {
        let port = try unusedLoopbackPort()
        let registry = MetricsRegistry()
        let provider = NetworkAgentProvider<LoadApi>(plugins: [.metrics(registry)], agent: Self.agent)
        let base = try #require(URL(string: "http://127.0.0.1:\(port)"))
        await #expect(throws: NetworkAgentError.self) {
            try await provider.request(endpoint: .fast(base: base, id: 1))
        }
        let snapshot = registry.snapshot()
        #expect(
            snapshot.value("networkagent_requests_total", labels("fast", "none", "transport_error:connection_refused"))
                == 1
        )
        #expect(snapshot.family("networkagent_response_headers_seconds")?.samples.isEmpty == true)
        #expect(registry.inFlight == 0)
    }

    @Test func deadlinePassedIsTimedOut() async throws {
        let server = try LoopbackServer { _ in ServerResponse(fault: .stall) }
        defer { server.stop() }
        let registry = MetricsRegistry()
        let provider = NetworkAgentProvider<LoadApi>(plugins: [.metrics(registry)], agent: Self.agent)
        await #expect(throws: NetworkAgentError.self) {
            try await provider.request(endpoint: .stall(base: server.baseURL, timeout: .milliseconds(200)))
        }
        let snapshot = registry.snapshot()
        #expect(snapshot.value("networkagent_requests_total", labels("stall", "none", "timed_out")) == 1)
        let duration = try #require(
            snapshot.histogram("networkagent_request_duration_seconds", ["route": "stall", "method": "GET"])
        )
        #expect(duration.sum >= 0.2)
    }

    @Test func cancelledCallerIsCancelled() async throws {
        let server = try LoopbackServer { _ in ServerResponse(fault: .stall) }
        defer { server.stop() }
        let registry = MetricsRegistry()
        let provider = NetworkAgentProvider<LoadApi>(plugins: [.metrics(registry)], agent: Self.agent)
        let call = Task { try await provider.request(endpoint: .stall(base: server.baseURL, timeout: .seconds(30))) }
        #expect(await eventually { server.requestCount == 1 })
        #expect(registry.inFlight == 1)
        call.cancel()
        await #expect(throws: NetworkAgentError.self) { try await call.value }
        let snapshot = registry.snapshot()
        #expect(snapshot.value("networkagent_requests_total", labels("stall", "none", "cancelled")) == 1)
        #expect(registry.inFlight == 0)
    }

    @Test func routeLabelsComeFromTheEndpointNeverTheURL() async throws {
        let server = try LoopbackServer { _ in .text("{}") }
        defer { server.stop() }
        let registry = MetricsRegistry()
        let poke = NetworkAgentProvider<PokeApi>(plugins: [.metrics(registry)], agent: Self.agent)
        let load = NetworkAgentProvider<LoadApi>(plugins: [.metrics(registry)], agent: Self.agent)
        let plain = NetworkAgentProvider<PlainEndpoint>(plugins: [.metrics(registry)], agent: Self.agent)
        for id in 1...5 {
            _ = try await poke.request(endpoint: .pokemon(base: server.baseURL, id: id))
            _ = try await load.request(endpoint: .fast(base: server.baseURL, id: id))
            _ = try await plain.request(endpoint: PlainEndpoint(baseURL: server.baseURL, path: "/things/\(id)"))
        }
        _ = try await poke.request(endpoint: .list(base: server.baseURL))

        let snapshot = registry.snapshot()
        let routes = Set(
            snapshot.family("networkagent_requests_total")?.samples.compactMap { $0.labels["route"] } ?? []
        )
        #expect(routes == ["/pokemon/{id}", "/pokemon", "fast", "PlainEndpoint"])
        #expect(snapshot.value("networkagent_requests_total", labels("/pokemon/{id}", "2xx", "success")) == 5)
        #expect(snapshot.value("networkagent_requests_total", labels("fast", "2xx", "success")) == 5)
        #expect(snapshot.value("networkagent_requests_total", labels("PlainEndpoint", "2xx", "success")) == 5)
        let text = registry.prometheusText()
        #expect(!text.contains("127.0.0.1"))
        #expect(!text.contains("/pokemon/3"))
        #expect(!text.contains("/fast/"))
        #expect(!text.contains("/things/"))
    }

    @Test func eventsOfRetryRefreshAndCachePluginsAreCountedUnderTheirOwnNames() async throws {
        let flaky = Locked(0)
        let server = try LoopbackServer { request in
            switch request.path {
            case "/flaky":
                let call = flaky.withLock {
                    $0 += 1
                    return $0
                }
                return call <= 2 ? .text("busy", status: 503) : .text("ok")
            case "/secured":
                return request.header("Authorization") == "Bearer fresh" ? .text("secret") : .text("no", status: 401)
            default:
                return .text("body")
            }
        }
        defer { server.stop() }
        let registry = MetricsRegistry()
        let provider = NetworkAgentProvider<EventApi>(
            plugins: [.metrics(registry), FakeTokenRefresh(), FakeRetry(attempts: 3), FakeCache()],
            agent: Self.agent
        )
        _ = try await provider.request(endpoint: .flaky(base: server.baseURL))
        _ = try await provider.request(endpoint: .cached(base: server.baseURL))
        _ = try await provider.request(endpoint: .cached(base: server.baseURL))
        _ = try await provider.request(endpoint: .stale(base: server.baseURL))
        _ = try await provider.request(endpoint: .secured(base: server.baseURL))

        let snapshot = registry.snapshot()
        let get = "GET"
        #expect(snapshot.value("networkagent_retries_total", ["route": "flaky", "method": get]) == 2)
        #expect(snapshot.total("networkagent_retries_total") == 2)
        #expect(snapshot.value("networkagent_token_refreshes_total", ["result": "succeeded"]) == 1)
        #expect(snapshot.total("networkagent_token_refreshes_total") == 1)
        let cache = "networkagent_cache_events_total"
        #expect(snapshot.value(cache, ["route": "cached", "method": get, "result": "miss"]) == 1)
        #expect(snapshot.value(cache, ["route": "cached", "method": get, "result": "hit"]) == 1)
        #expect(snapshot.value(cache, ["route": "stale", "method": get, "result": "stale"]) == 1)
        #expect(snapshot.value(cache, ["route": "stale", "method": get, "result": "revalidated"]) == 1)
        let events = "networkagent_plugin_events_total"
        #expect(snapshot.value(events, ["source": "cache", "name": "stored"]) == 1)
        #expect(snapshot.value(events, ["source": "token_refresh", "name": "refresh_started"]) == 1)
        #expect(snapshot.value(events, ["source": "transport", "name": "response_headers"]) == nil)

        // Three exchanges with the server for /flaky, none for the cache hit, two for /secured.
        let headers = "networkagent_response_headers_seconds"
        #expect(snapshot.histogram(headers, ["route": "flaky", "method": get])?.count == 3)
        #expect(snapshot.histogram(headers, ["route": "cached", "method": get])?.count == 1)
        #expect(snapshot.histogram(headers, ["route": "secured", "method": get])?.count == 2)
        #expect(server.requestCount == 7)
    }

    @Test func attemptsPluginMeasuresEveryNetworkAttempt() async throws {
        let calls = Locked(0)
        let server = try LoopbackServer { request in
            let call = calls.withLock {
                $0 += 1
                return $0
            }
            return call <= 2 ? .text("busy", status: 503) : .text("echo \(request.body.count)")
        }
        defer { server.stop() }
        let registry = MetricsRegistry()
        let provider = NetworkAgentProvider<LoadApi>(
            plugins: [.metrics(registry), FakeRetry(attempts: 3), .metricsAttempts(registry)],
            agent: Self.agent
        )
        let body = Data(repeating: 0x61, count: 300)
        let (data, _) = try await provider.request(endpoint: .echo(base: server.baseURL, body: body))
        #expect(String(decoding: data, as: UTF8.self) == "echo 300")

        let snapshot = registry.snapshot()
        #expect(snapshot.value("networkagent_requests_total", labels("echo", "POST", "2xx", "success")) == 1)
        #expect(snapshot.total("networkagent_requests_total") == 1)
        #expect(snapshot.value("networkagent_attempts_total", labels("echo", "POST", "5xx", "http_error")) == 2)
        #expect(snapshot.value("networkagent_attempts_total", labels("echo", "POST", "2xx", "success")) == 1)
        let route = ["route": "echo", "method": "POST"]
        #expect(snapshot.histogram("networkagent_attempt_duration_seconds", route)?.count == 3)
        #expect(snapshot.value("networkagent_attempt_request_body_bytes_total", route) == 900)
        // "busy", "busy", "echo 300"
        #expect(snapshot.value("networkagent_attempt_response_body_bytes_total", route) == 16)
        #expect(snapshot.value("networkagent_retries_total", route) == 2)
        #expect(snapshot.histogram("networkagent_request_body_bytes", route)?.sum == 300)
        #expect(registry.inFlight == 0)
    }

    @Test func fileBackedUploadCountsItsFileSize() async throws {
        let server = try LoopbackServer { request in .text("\(request.body.count)") }
        defer { server.stop() }
        let registry = MetricsRegistry()
        let agent = NetworkAgent(
            transport: Self.transport,
            configuration: NetworkAgentConfiguration(multipartMemoryThreshold: 1024)
        )
        let provider = NetworkAgentProvider<PlainEndpoint>(plugins: [.metrics(registry)], agent: agent)
        let endpoint = PlainEndpoint(
            baseURL: server.baseURL,
            path: "/upload",
            method: .post,
            task: .upload(parts: [
                HTTPMultipartTask(
                    data: Data(repeating: 7, count: 4096),
                    name: "file",
                    mimeType: "application/octet-stream"
                )
            ])
        )
        let (data, _) = try await provider.request(endpoint: endpoint)
        let sent = try #require(Int(String(decoding: data, as: UTF8.self)))
        #expect(sent > 4096)
        let histogram = registry.snapshot()
            .histogram("networkagent_request_body_bytes", ["route": "PlainEndpoint", "method": "POST"])
        #expect(histogram?.sum == Double(sent))
        #expect(histogram?.count == 1)
    }
}
