import Foundation
import NetworkAgent
import NetworkAgentMetrics
import NetworkAgentTestSupport
import NetworkAgentTesting
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The registry's storage and the plugin's measurements, with a stub transport and a manual clock.
@Suite struct MetricsRegistryTests {
    static let base = URL(fileURLWithPath: "/")

    func labels(_ route: String, _ statusClass: String, _ outcome: String) -> [String: String] {
        ["route": route, "method": "GET", "status_class": statusClass, "outcome": outcome]
    }

    static func measurement(route: String = "r", seconds: Double, status: Int? = 200) -> MetricsMeasurement {
        MetricsMeasurement(
            labels: MetricsLabels(route: route, method: "GET"),
            statusCode: status,
            outcome: .success,
            duration: .milliseconds(Int64((seconds * 1000).rounded())),
            requestBodyBytes: 0,
            responseBodyBytes: 10
        )
    }

    /// Durations measured on a manual clock land exactly: a bound is inclusive (`le`), just above it is the next.
    @Test func bucketBoundsAreInclusive() async throws {
        let clock = ManualClock()
        let registry = MetricsRegistry(configuration: MetricsConfiguration(durationBuckets: [0.1, 0.5]))
        let durations: [String: Duration] = [
            "/fast/1": .milliseconds(100), "/fast/2": .milliseconds(101), "/fast/3": .milliseconds(500),
            "/fast/4": .milliseconds(501), "/fast/5": .zero,
        ]
        let provider = NetworkAgentProvider<LoadApi>(
            plugins: [
                MetricsPlugin(handlers: [registry], clock: clock),
                ClockAdvancer(clock: clock) { durations[$0.url?.path ?? ""] ?? .zero },
            ],
            agent: NetworkAgent(transport: StubTransport(fallback: .status(200)))
        )
        for id in 1...5 {
            _ = try await provider.request(endpoint: .fast(base: Self.base, id: id))
        }
        let histogram = try #require(
            registry.snapshot().histogram("networkagent_request_duration_seconds", ["route": "fast", "method": "GET"])
        )
        #expect(histogram.buckets.map(\.upperBound) == [0.1, 0.5])
        #expect(histogram.buckets.map(\.cumulativeCount) == [2, 4])
        #expect(histogram.count == 5)
        #expect(abs(histogram.sum - 1.202) < 1e-9)
    }

    @Test func quantilesAreNearestRankOverTheWindow() {
        let registry = MetricsRegistry(configuration: MetricsConfiguration(quantileWindow: 100))
        for value in (1...100).shuffled() {
            registry.handle(.requestFinished(Self.measurement(seconds: Double(value) / 1000)))
        }
        let quantiles = registry.snapshot().latency(route: "r", method: "GET")
        #expect(quantiles?.count == 100)
        #expect(quantiles?.p50 == 0.05)
        #expect(quantiles?.p95 == 0.095)
        #expect(quantiles?.p99 == 0.099)
        #expect(registry.snapshot().overallLatency.p50 == 0.05)
    }

    @Test func theWindowKeepsOnlyTheMostRecentDurations() {
        let registry = MetricsRegistry(configuration: MetricsConfiguration(quantileWindow: 10))
        for value in 1...30 {
            registry.handle(.requestFinished(Self.measurement(seconds: Double(value))))
        }
        let quantiles = registry.snapshot().latency(route: "r", method: "GET")
        #expect(quantiles?.count == 10)
        #expect(quantiles?.p50 == 25)
        #expect(quantiles?.p99 == 30)
        // The histogram still counts everything.
        #expect(
            registry.snapshot().histogram("networkagent_request_duration_seconds", ["route": "r", "method": "GET"])?
                .count == 30
        )
    }

    @Test func emptyWindowHasNoQuantiles() {
        let snapshot = MetricsRegistry().snapshot()
        #expect(snapshot.latency.isEmpty)
        #expect(snapshot.overallLatency == .init(route: nil, method: nil, count: 0, p50: nil, p95: nil, p99: nil))
    }

    @Test func labelSetsPastTheLimitFoldIntoOneOverflowSeries() {
        let registry = MetricsRegistry(configuration: MetricsConfiguration(maximumSeriesPerMetric: 3))
        for route in ["a", "b", "c", "d", "e", "a"] {
            registry.handle(.requestFinished(Self.measurement(route: route, seconds: 0.01)))
        }
        let snapshot = registry.snapshot()
        let samples = snapshot.family("networkagent_requests_total")?.samples ?? []
        #expect(samples.count == 4)
        #expect(snapshot.value("networkagent_requests_total", labels("a", "2xx", "success")) == 2)
        let overflow = ["route": "overflow", "method": "overflow", "status_class": "overflow", "outcome": "overflow"]
        #expect(snapshot.value("networkagent_requests_total", overflow) == 2)
        #expect(
            snapshot.histogram("networkagent_request_duration_seconds", ["route": "overflow", "method": "overflow"])?
                .count == 2
        )
        #expect(snapshot.latency.count == 4)
    }

    /// 32 tasks recording 2,000 observations each: nothing lost, nothing double-counted.
    @Test func concurrentObservationsAreAllCounted() async {
        let registry = MetricsRegistry(configuration: MetricsConfiguration(durationBuckets: [0.5, 1.5]))
        let labels = MetricsLabels(route: "r", method: "GET")
        await withTaskGroup(of: Void.self) { group in
            for task in 0..<32 {
                group.addTask {
                    for index in 0..<2000 {
                        registry.handle(.requestStarted(labels))
                        registry.handle(.requestFinished(Self.measurement(seconds: Double((task + index) % 2))))
                        registry.handle(.event(labels, NetworkAgentEvent(.retryScheduled(delay: .zero))))
                    }
                }
            }
        }
        let snapshot = registry.snapshot()
        #expect(snapshot.total("networkagent_requests_total") == 64_000)
        let histogram = snapshot.histogram("networkagent_request_duration_seconds", ["route": "r", "method": "GET"])
        #expect(histogram?.buckets.map(\.cumulativeCount) == [32_000, 64_000])
        #expect(histogram?.sum == 32_000)
        #expect(snapshot.value("networkagent_retries_total", ["route": "r", "method": "GET"]) == 64_000)
        #expect(registry.inFlight == 0)
    }

    @Test func handlersReceiveEveryObservationInOrder() async throws {
        let handler = RecordingHandler()
        let stub = StubTransport(fallback: .status(204))
        let provider = NetworkAgentProvider<LoadApi>(
            plugins: [
                .metrics(MetricsRegistry(), forwardingTo: [handler]),
                EventEmitter(event: NetworkAgentEvent(.cacheMiss)),
            ],
            agent: NetworkAgent(transport: stub)
        )
        _ = try await provider.request(endpoint: .fast(base: Self.base, id: 1))
        let observations = handler.all
        let labels = MetricsLabels(route: "fast", method: "GET")
        try #require(observations.count == 3)
        #expect(observations[0] == .requestStarted(labels))
        #expect(observations[1] == .event(labels, NetworkAgentEvent(.cacheMiss)))
        guard case .requestFinished(let finished) = observations[2] else {
            Issue.record("expected requestFinished, got \(observations[2])")
            return
        }
        #expect(finished.labels == labels)
        #expect(finished.statusCode == 204)
        #expect(finished.statusClass == "2xx")
        #expect(finished.outcome == .success)
        #expect(finished.requestBodyBytes == 0)
        #expect(finished.responseBodyBytes == 0)
    }

    @Test func snapshotRoundTripsThroughJSON() throws {
        let registry = MetricsRegistry()
        let labels = MetricsLabels(route: "r", method: "GET")
        registry.handle(.requestStarted(labels))
        registry.handle(.requestFinished(Self.measurement(seconds: 0.3)))
        registry.handle(.responseHeaders(labels, seconds: 0.1))
        registry.handle(.event(labels, NetworkAgentEvent(.tokenRefresh(succeeded: false))))
        let snapshot = registry.snapshot()
        let json = try JSONEncoder().encode(snapshot)
        let decoded = try JSONDecoder().decode(MetricsSnapshot.self, from: json)
        #expect(decoded == snapshot)
        let object = try #require(try JSONSerialization.jsonObject(with: json) as? [String: Any])
        #expect(object["families"] is [Any])
        #expect(decoded.value("networkagent_token_refreshes_total", ["result": "failed"]) == 1)
    }

    @Test func resetForgetsObservationsButNotRunningRequests() {
        let registry = MetricsRegistry()
        let labels = MetricsLabels(route: "r", method: "GET")
        registry.handle(.requestStarted(labels))
        registry.handle(.requestFinished(Self.measurement(seconds: 0.3)))
        registry.handle(.requestStarted(labels))
        registry.reset()
        let snapshot = registry.snapshot()
        #expect(snapshot.total("networkagent_requests_total") == 0)
        #expect(snapshot.latency.isEmpty)
        #expect(snapshot.value("networkagent_requests_in_flight") == 1)
    }

    @Test func bucketsAreSortedAndCleaned() {
        let configuration = MetricsConfiguration(
            durationBuckets: [1, 0.5, .infinity, 1, .nan],
            quantileWindow: 0,
            maximumSeriesPerMetric: -3
        )
        #expect(configuration.durationBuckets == [0.5, 1])
        #expect(configuration.quantileWindow == 1)
        #expect(configuration.maximumSeriesPerMetric == 1)
        #expect(MetricsConfiguration().durationBuckets == MetricsConfiguration.defaultDurationBuckets)
    }
}

/// Outcome, status class and event classification.
@Suite struct MetricsClassificationTests {
    @Test(arguments: [
        (NetworkAgentError(.cancelled, "c"), "cancelled"),
        (NetworkAgentError(.timedOut, "t"), "timed_out"),
        (
            NetworkAgentError(.transport, "t", underlying: URLError(.cannotConnectToHost)),
            "transport_error:connection_refused"
        ),
        (
            NetworkAgentError(.transport, "t", underlying: URLError(.networkConnectionLost)),
            "transport_error:connection_lost"
        ),
        (NetworkAgentError(.transport, "t", underlying: URLError(.cannotFindHost)), "transport_error:dns"),
        (NetworkAgentError(.transport, "t", underlying: URLError(.secureConnectionFailed)), "transport_error:tls"),
        (NetworkAgentError(.transport, "t", underlying: URLError(.badServerResponse)), "transport_error:bad_response"),
        (NetworkAgentError(.transport, "t"), "transport_error:other"),
        (NetworkAgentError(.redirectFailed, "r"), "error:redirect_failed"),
        (NetworkAgentError(.unacceptableStatus, "u"), "error:unacceptable_status"),
        (
            NetworkAgentError(
                .unacceptableStatus,
                "u",
                response: HTTPURLResponse(
                    url: URL(fileURLWithPath: "/"),
                    statusCode: 404,
                    httpVersion: nil,
                    headerFields: nil
                )
            ), "http_error"
        ),
    ])
    func networkAgentErrorsMapToOutcomeLabels(error: NetworkAgentError, label: String) {
        #expect(MetricsOutcome(error: error).description == label)
    }

    @Test func foreignErrorsMapToOutcomeLabels() {
        struct PluginFailure: Error {}
        #expect(MetricsOutcome(error: CancellationError()) == .cancelled)
        #expect(MetricsOutcome(error: URLError(.cancelled)) == .cancelled)
        #expect(MetricsOutcome(error: URLError(.timedOut)) == .timedOut)
        #expect(MetricsOutcome(error: URLError(.notConnectedToInternet)).description == "transport_error:offline")
        #expect(MetricsOutcome(error: PluginFailure()).description == "error:other")
    }

    @Test func statusClasses() {
        #expect(
            [nil, 101, 200, 299, 304, 404, 503, 600, 42].map(MetricsMeasurement.statusClass(of:)) == [
                "none", "1xx", "2xx", "2xx", "3xx", "4xx", "5xx", "other", "other",
            ]
        )
    }

    @Test func eventKinds() {
        func kind(_ kind: NetworkAgentEvent.Kind) -> String {
            let event = NetworkAgentEvent(kind)
            return event.source + "." + event.name
        }
        #expect(kind(.retryScheduled(delay: .seconds(1))) == "retry.retry_scheduled")
        #expect(kind(.other(source: "retry", name: "gave_up")) == "retry.gave_up")
        #expect(kind(.tokenRefresh(succeeded: true)) == "token_refresh.refresh_succeeded")
        #expect(kind(.tokenRefresh(succeeded: false)) == "token_refresh.refresh_failed")
        #expect(kind(.other(source: "token_refresh", name: "refresh_started")) == "token_refresh.refresh_started")
        #expect(kind(.cacheHit) == "cache.hit")
        #expect(kind(.cacheMiss) == "cache.miss")
        #expect(kind(.cacheRevalidated) == "cache.revalidated")
        #expect(kind(.cacheStale) == "cache.stale")
        #expect(kind(.responseHeaders(after: .zero)) == "transport.response_headers")
        #expect(NetworkAgentEvent(source: "cache", name: "stored").kind == .other(source: "cache", name: "stored"))
        // A name alone never makes a typed event: it is counted as an other plugin event.
        let registry = MetricsRegistry()
        let labels = MetricsLabels(route: "r", method: "GET")
        registry.handle(.event(labels, NetworkAgentEvent(source: "retry", name: "retry_scheduled")))
        #expect(!registry.prometheusText().contains("networkagent_retries_total{"))
        #expect(
            registry.prometheusText().contains(
                #"networkagent_plugin_events_total{source="retry",name="retry_scheduled"} 1"#
            )
        )
    }
}
