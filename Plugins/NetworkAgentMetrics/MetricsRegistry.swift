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
    /// Every series and the in-flight count under one lock: a finished request takes it once.
    private let state = Locked(MetricsState())

    /// Creates an empty registry.
    ///
    /// - Parameter configuration: Buckets, quantile window and series limit.
    public init(configuration: MetricsConfiguration = MetricsConfiguration()) {
        self.configuration = configuration
    }

    /// The number of requests inside the exchange right now.
    public var inFlight: Int { state.withLock { $0.inFlight } }

    /// Records one observation.
    ///
    /// - Parameter observation: What the plugin observed.
    public func handle(_ observation: MetricsObservation) {
        switch observation {
        case .requestStarted:
            startRequest()
        case .requestFinished(let measurement):
            recordRequest(measurement)
        case .attemptFinished(let measurement):
            recordAttempt(measurement)
        case .responseHeaders(let labels, let seconds):
            recordResponseHeaders(labels, seconds: seconds)
        case .event(let labels, let event):
            recordEvent(event.kind, labels: labels)
        }
    }

    /// Counts a request entering the exchange in the in-flight gauge (``MetricsObservation/requestStarted(_:)``).
    func startRequest() {
        state.withLock { $0.inFlight += 1 }
    }

    /// A value for a histogram with its bucket, worked out before the lock.
    private struct Bucketed {
        let value: Double
        let bucket: Int
        let bucketCount: Int

        init(_ value: Double, in bounds: [Double]) {
            self.value = value
            self.bucket = bucketIndex(of: value, in: bounds)
            self.bucketCount = bounds.count
        }
    }

    /// A transfer phase's duration with its bucket, worked out before the lock.
    private struct BucketedPhase {
        /// The phase's position in ``MetricsTransferPhase/inOrder``.
        let index: Int
        let value: Bucketed
    }

    /// Counts the request, observes its duration, body sizes and transfer phases, and adds its duration to the
    /// latency windows. `route` is `RouteKey(measurement.labels)` when the caller has it already.
    func recordRequest(_ measurement: MetricsMeasurement, route: RouteKey? = nil) {
        let route = route ?? RouteKey(measurement.labels)
        let key = OutcomeKey(measurement, route: route)
        let duration = Bucketed(measurement.seconds, in: configuration.durationBuckets)
        let sent = measurement.requestBodyBytes.map { Bucketed(Double($0), in: configuration.sizeBuckets) }
        let received = measurement.responseBodyBytes.map { Bucketed(Double($0), in: configuration.sizeBuckets) }
        // At most one value per phase, on the stack: a response without timings (URLSession's) costs one nil check.
        let phases = MetricsTransferPhase.inOrder
        withUnsafeTemporaryAllocation(of: BucketedPhase.self, capacity: phases.count) { buffer in
            var phaseCount = 0
            if let timings = measurement.transferTimings {
                MetricsTransferPhase.forEachDuration(in: timings) { index, seconds in
                    let value = Bucketed(seconds, in: configuration.phaseBuckets)
                    buffer.initializeElement(at: phaseCount, to: BucketedPhase(index: index, value: value))
                    phaseCount += 1
                }
            }
            defer { buffer.prefix(phaseCount).deinitialize() }
            state.withLock { state in
                state.inFlight -= 1
                state.requests.add(1, to: key, limit: configuration.maximumSeriesPerMetric)
                observe(duration, in: &state.requestDuration, route: route)
                if let sent { observe(sent, in: &state.requestBodyBytes, route: route) }
                if let received { observe(received, in: &state.responseBodyBytes, route: route) }
                if phaseCount > 0 {
                    state.transferPhases.update(
                        key: route,
                        bucketCount: configuration.phaseBuckets.count,
                        limit: configuration.maximumSeriesPerMetric
                    ) { histograms in
                        for observed in buffer.prefix(phaseCount) {
                            histograms[observed.index].record(observed.value.value, bucket: observed.value.bucket)
                        }
                    }
                }
                addToWindows(duration.value, route: route, in: &state)
            }
        }
    }

    /// Counts the attempt, observes its duration and adds its body bytes to the per-route totals.
    func recordAttempt(_ measurement: MetricsMeasurement) {
        let limit = configuration.maximumSeriesPerMetric
        let route = RouteKey(measurement.labels)
        let key = OutcomeKey(measurement, route: route)
        let duration = Bucketed(measurement.seconds, in: configuration.durationBuckets)
        let sent = UInt64(max(0, measurement.requestBodyBytes ?? 0))
        let received = UInt64(max(0, measurement.responseBodyBytes ?? 0))
        state.withLock { state in
            state.attempts.add(1, to: key, limit: limit)
            observe(duration, in: &state.attemptDuration, route: route)
            state.attemptRequestBodyBytes.add(sent, to: route, limit: limit)
            state.attemptResponseBodyBytes.add(received, to: route, limit: limit)
        }
    }

    /// Observes a time to response headers; `route` is `RouteKey(labels)` when the caller has it already.
    func recordResponseHeaders(_ labels: MetricsLabels, seconds: Double, route: RouteKey? = nil) {
        let route = route ?? RouteKey(labels)
        let duration = Bucketed(seconds, in: configuration.durationBuckets)
        state.withLock { state in observe(duration, in: &state.responseHeaders, route: route) }
    }

    /// Counts an event by its typed kind: retries by route, token refreshes by result, cache lookups by route and
    /// result, circuit breaker transitions by key (and the key's state for the gauge), and every other event by
    /// source and name.
    func recordEvent(_ kind: NetworkAgentEvent.Kind, labels: MetricsLabels) {
        let limit = configuration.maximumSeriesPerMetric
        state.withLock { state in
            switch kind {
            case .retryScheduled:
                state.retries.add(1, to: RouteKey(labels), limit: limit)
            case .tokenRefresh(let succeeded):
                state.tokenRefreshes.add(1, to: ResultKey(result: succeeded ? "succeeded" : "failed"), limit: limit)
            case .cacheHit, .cacheMiss, .cacheRevalidated, .cacheStale:
                let key = RouteResultKey(route: labels.route, method: labels.method, result: kind.name)
                state.cacheEvents.add(1, to: key, limit: limit)
            case .circuitStateChanged(let key, let from, let to):
                if state.circuitStates.count < limit || state.circuitStates[key] != nil {
                    state.circuitStates[key] = to
                }
                state.circuitTransitions.add(
                    1,
                    to: CircuitTransitionKey(key: key, from: from.rawValue, to: to.rawValue),
                    limit: limit
                )
            case .responseHeaders, .other:
                state.pluginEvents.add(1, to: EventKey(source: kind.source, name: kind.name), limit: limit)
            }
        }
    }

    private func observe(_ value: Bucketed, in series: inout HistogramSeries<RouteKey>, route: RouteKey) {
        series.observe(
            value.value,
            bucket: value.bucket,
            bucketCount: value.bucketCount,
            key: route,
            limit: configuration.maximumSeriesPerMetric
        )
    }

    /// Adds a request duration to its route's quantile window (the overflow window once the series limit is
    /// reached) and to the overall window.
    private func addToWindows(_ seconds: Double, route: RouteKey, in state: inout MetricsState) {
        let limit = configuration.maximumSeriesPerMetric
        let capacity = configuration.quantileWindow
        if let index = state.windows.index(forKey: route) {
            state.windows.values[index].add(seconds, capacity: capacity)
        } else {
            state.windows[state.windows.count < limit ? route : .overflow, default: Window()].add(
                seconds,
                capacity: capacity
            )
        }
        state.overallWindow.add(seconds, capacity: capacity)
    }

    /// Forgets every observation. The in-flight gauge keeps counting the requests still running.
    public func reset() {
        state.withLock { state in
            var empty = MetricsState()
            empty.inFlight = state.inFlight
            state = empty
        }
    }

    /// A consistent copy of every metric, with the latency quantiles worked out.
    ///
    /// The lock is held only to copy the storage; sorting and quantiles happen after.
    ///
    /// - Returns: The snapshot; encode it with `JSONEncoder` for the JSON export.
    public func snapshot() -> MetricsSnapshot {
        let state = state.withLock { $0 }
        return MetricsSnapshotBuilder(configuration: configuration).build(state, inFlight: state.inFlight)
    }

    /// The metrics in the Prometheus text exposition format 0.0.4 (`text/plain; version=0.0.4`).
    ///
    /// - Returns: The exposition text, ending with a newline.
    public func prometheusText() -> String {
        snapshot().prometheusText()
    }
}

extension OutcomeKey {
    /// The key of a measurement whose route key (`RouteKey(measurement.labels)`) is `route`.
    init(_ measurement: MetricsMeasurement, route: RouteKey) {
        self.init(route: route, statusClass: measurement.statusClass, outcome: measurement.outcome.description)
    }
}
