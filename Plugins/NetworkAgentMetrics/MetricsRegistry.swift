import NetworkAgent

/// The built-in ``MetricsHandler``: counters, histograms, an in-flight gauge and latency quantiles in memory, with
/// Prometheus and JSON export.
///
/// ```swift
/// let metrics = MetricsRegistry()
/// let provider = NetworkAgentProvider<Api>(plugins: [.metrics(metrics), .retry()])
/// // …
/// let text = metrics.prometheusText()              // serve at /metrics
/// let json = try JSONEncoder().encode(metrics.snapshot())
/// ```
///
/// Thread-safe: one registry serves any number of providers and concurrent requests. Each observation takes one
/// short lock (a few dictionary updates); the in-flight gauge is a second lock. Bucket positions and labels are worked
/// out before the lock.
public final class MetricsRegistry: MetricsHandler {
    /// The buckets, window and limits in use.
    public let configuration: MetricsConfiguration
    private let state = Locked(MetricsState())
    private let inFlightCount = Locked(0)

    /// Creates an empty registry.
    ///
    /// - Parameter configuration: Buckets, quantile window and series limit.
    public init(configuration: MetricsConfiguration = MetricsConfiguration()) {
        self.configuration = configuration
    }

    /// The number of requests inside the exchange right now.
    public var inFlight: Int { inFlightCount.withLock { $0 } }

    /// Records one observation.
    ///
    /// - Parameter observation: What the plugin observed.
    public func handle(_ observation: MetricsObservation) {
        let limit = configuration.maximumSeriesPerMetric
        let durations = configuration.durationBuckets
        let sizes = configuration.sizeBuckets
        switch observation {
        case .requestStarted:
            inFlightCount.withLock { $0 += 1 }

        case .requestFinished(let measurement):
            inFlightCount.withLock { $0 -= 1 }
            let key = OutcomeKey(measurement)
            let route = RouteKey(measurement.labels)
            let seconds = measurement.seconds
            let durationIndex = bucketIndex(of: seconds, in: durations)
            let sent = measurement.requestBodyBytes.map { (Double($0), bucketIndex(of: Double($0), in: sizes)) }
            let received = measurement.responseBodyBytes.map { (Double($0), bucketIndex(of: Double($0), in: sizes)) }
            let window = configuration.quantileWindow
            state.withLock { state in
                state.requests.add(1, to: key, limit: limit)
                state.requestDuration.observe(
                    seconds,
                    bucket: durationIndex,
                    bucketCount: durations.count,
                    key: route,
                    limit: limit
                )
                if let (bytes, index) = sent {
                    state.requestBodyBytes.observe(
                        bytes,
                        bucket: index,
                        bucketCount: sizes.count,
                        key: route,
                        limit: limit
                    )
                }
                if let (bytes, index) = received {
                    state.responseBodyBytes.observe(
                        bytes,
                        bucket: index,
                        bucketCount: sizes.count,
                        key: route,
                        limit: limit
                    )
                }
                let windowKey = state.windows.count < limit || state.windows[route] != nil ? route : .overflow
                state.windows[windowKey, default: Window()].add(seconds, capacity: window)
                state.overallWindow.add(seconds, capacity: window)
            }

        case .attemptFinished(let measurement):
            let key = OutcomeKey(measurement)
            let route = RouteKey(measurement.labels)
            let seconds = measurement.seconds
            let index = bucketIndex(of: seconds, in: durations)
            let sent = UInt64(max(0, measurement.requestBodyBytes ?? 0))
            let received = UInt64(max(0, measurement.responseBodyBytes ?? 0))
            state.withLock { state in
                state.attempts.add(1, to: key, limit: limit)
                state.attemptDuration.observe(
                    seconds,
                    bucket: index,
                    bucketCount: durations.count,
                    key: route,
                    limit: limit
                )
                state.attemptRequestBodyBytes.add(sent, to: route, limit: limit)
                state.attemptResponseBodyBytes.add(received, to: route, limit: limit)
            }

        case .responseHeaders(let labels, let seconds):
            let route = RouteKey(labels)
            let index = bucketIndex(of: seconds, in: durations)
            state.withLock { state in
                state.responseHeaders.observe(
                    seconds,
                    bucket: index,
                    bucketCount: durations.count,
                    key: route,
                    limit: limit
                )
            }

        case .event(let labels, let event):
            let kind = MetricsEventKind(event)
            state.withLock { state in
                switch kind {
                case .retryScheduled:
                    state.retries.add(1, to: RouteKey(labels), limit: limit)
                case .tokenRefresh(let result):
                    state.tokenRefreshes.add(1, to: ResultKey(result: result), limit: limit)
                case .cache(let result):
                    state.cacheEvents.add(
                        1,
                        to: RouteResultKey(route: labels.route, method: labels.method, result: result),
                        limit: limit
                    )
                case .other(let source, let name):
                    state.pluginEvents.add(1, to: EventKey(source: source, name: name), limit: limit)
                }
            }
        }
    }

    /// Forgets every observation. The in-flight gauge keeps counting the requests still running.
    public func reset() {
        state.withLock { $0 = MetricsState() }
    }

    /// A consistent copy of every metric, with the latency quantiles worked out.
    ///
    /// The lock is held only to copy the storage; sorting and quantiles happen after.
    ///
    /// - Returns: The snapshot; encode it with `JSONEncoder` for the JSON export.
    public func snapshot() -> MetricsSnapshot {
        let state = state.withLock { $0 }
        return MetricsSnapshotBuilder(configuration: configuration).build(state, inFlight: inFlight)
    }

    /// The metrics in the Prometheus text exposition format 0.0.4 (`text/plain; version=0.0.4`).
    ///
    /// - Returns: The exposition text, ending with a newline.
    public func prometheusText() -> String {
        snapshot().prometheusText()
    }
}

extension OutcomeKey {
    init(_ measurement: MetricsMeasurement) {
        self.init(
            route: measurement.labels.route,
            method: measurement.labels.method,
            statusClass: measurement.statusClass,
            outcome: measurement.outcome.description
        )
    }
}
