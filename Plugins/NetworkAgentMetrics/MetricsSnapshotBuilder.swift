import NetworkAgent

/// Turns the registry's storage into a ``MetricsSnapshot``: families in a fixed order, series sorted by labels.
struct MetricsSnapshotBuilder {
    let configuration: MetricsConfiguration

    private static let routeLabels = ["route", "method"]
    private static let outcomeLabels = ["route", "method", "status_class", "outcome"]
    private static let phaseLabels = ["route", "method", "phase"]

    func build(_ state: MetricsState, inFlight: Int) -> MetricsSnapshot {
        MetricsSnapshot(
            families: requestFamilies(state, inFlight: inFlight) + attemptFamilies(state) + eventFamilies(state),
            latency: routeLatency(state),
            overallLatency: quantiles(state.overallWindow, route: nil, method: nil)
        )
    }

    /// Requests, their duration, the in-flight gauge, body sizes and time to headers.
    private func requestFamilies(_ state: MetricsState, inFlight: Int) -> [MetricsSnapshot.Family] {
        let durations = configuration.durationBuckets
        let sizes = configuration.sizeBuckets
        return [
            counter(
                "networkagent_requests_total",
                "Requests that went through the exchange, by route, method, status class and outcome.",
                Self.outcomeLabels,
                state.requests
            ),
            histogram(
                "networkagent_request_duration_seconds",
                "Time from entering the metrics plugin's exchange to leaving it, retries and backoff included.",
                state.requestDuration,
                durations
            ),
            MetricsSnapshot.Family(
                name: "networkagent_requests_in_flight",
                help: "Requests inside the exchange right now.",
                kind: .gauge,
                labelNames: [],
                samples: [MetricsSnapshot.Sample(labels: [:], value: Double(inFlight))]
            ),
            histogram(
                "networkagent_request_body_bytes",
                "Size of request bodies handed to the exchange; streams of unknown length are left out.",
                state.requestBodyBytes,
                sizes
            ),
            histogram(
                "networkagent_response_body_bytes",
                "Size of response bodies handed back from the exchange.",
                state.responseBodyBytes,
                sizes
            ),
            histogram(
                "networkagent_response_headers_seconds",
                "Time from sending to receiving response headers, per exchange with the server (attempts and "
                    + "redirect hops).",
                state.responseHeaders,
                durations
            ),
            histogram(
                "networkagent_transfer_phase_seconds",
                "Duration of each phase of the transfer a request ended with (dns, connect, tls, pretransfer, "
                    + "first_byte, transfer), when the transport measures them; phases that did not happen are left "
                    + "out.",
                state.transferPhases.series,
                configuration.phaseBuckets,
                labelNames: Self.phaseLabels
            ),
        ]
    }

    /// Network attempts (with the attempts plugin registered): count, duration and bytes.
    private func attemptFamilies(_ state: MetricsState) -> [MetricsSnapshot.Family] {
        let durations = configuration.durationBuckets
        return [
            counter(
                "networkagent_attempts_total",
                "Network attempts, by route, method, status class and outcome (with the attempts plugin registered).",
                Self.outcomeLabels,
                state.attempts
            ),
            histogram(
                "networkagent_attempt_duration_seconds",
                "Duration of single network attempts (with the attempts plugin registered).",
                state.attemptDuration,
                durations
            ),
            counter(
                "networkagent_attempt_request_body_bytes_total",
                "Request body bytes handed to the transport, all attempts included.",
                Self.routeLabels,
                state.attemptRequestBodyBytes
            ),
            counter(
                "networkagent_attempt_response_body_bytes_total",
                "Response body bytes received from the transport, all attempts included.",
                Self.routeLabels,
                state.attemptResponseBodyBytes
            ),
        ]
    }

    /// The events plugins emitted: retries, token refreshes, cache lookups and the rest.
    private func eventFamilies(_ state: MetricsState) -> [MetricsSnapshot.Family] {
        [
            counter(
                "networkagent_retries_total",
                "Retries scheduled by a retry plugin (event retry.retry_scheduled).",
                Self.routeLabels,
                state.retries
            ),
            counter(
                "networkagent_token_refreshes_total",
                "Token refreshes by result (events token_refresh.refresh_succeeded and refresh_failed).",
                ["result"],
                state.tokenRefreshes
            ),
            counter(
                "networkagent_cache_events_total",
                "Cache lookups by result: hit, miss, revalidated, stale (events cache.<result>).",
                ["route", "method", "result"],
                state.cacheEvents
            ),
            counter(
                "networkagent_plugin_events_total",
                "Other events emitted by plugins during requests, by source and name.",
                ["source", "name"],
                state.pluginEvents
            ),
            circuitStateFamily(state),
            counter(
                "networkagent_circuit_breaker_transitions_total",
                "Circuit breaker state changes by key, from and to (event circuit_breaker.state_changed).",
                ["key", "from", "to"],
                state.circuitTransitions
            ),
        ]
    }

    /// One series per circuit breaker key and state: 1 for the key's current state, 0 for the others.
    private func circuitStateFamily(_ state: MetricsState) -> MetricsSnapshot.Family {
        let samples = state.circuitStates.sorted { $0.key < $1.key }.flatMap { key, current in
            NetworkAgentEvent.CircuitState.allCases.map { candidate in
                MetricsSnapshot.Sample(
                    labels: ["key": key, "state": candidate.rawValue],
                    value: candidate == current ? 1 : 0
                )
            }
        }
        return MetricsSnapshot.Family(
            name: "networkagent_circuit_breaker_state",
            help: "The state of each circuit breaker key as last seen in a state change: 1 for the current state "
                + "(closed, open, half_open), 0 for the others.",
            kind: .gauge,
            labelNames: ["key", "state"],
            samples: samples
        )
    }

    /// The latency quantiles of each route, sorted by route and method.
    private func routeLatency(_ state: MetricsState) -> [MetricsSnapshot.Quantiles] {
        state.windows
            .sorted { ($0.key.route, $0.key.method) < ($1.key.route, $1.key.method) }
            .map { quantiles($0.value, route: $0.key.route, method: $0.key.method) }
    }

    private func counter<Key: SeriesKey>(
        _ name: String,
        _ help: String,
        _ labelNames: [String],
        _ series: CounterSeries<Key>
    ) -> MetricsSnapshot.Family {
        let samples = series.values
            .map { (values: $0.key.labelValues, count: $0.value) }
            .sorted { $0.values.lexicographicallyPrecedes($1.values) }
            .map { MetricsSnapshot.Sample(labels: labels(labelNames, $0.values), value: Double($0.count)) }
        return MetricsSnapshot.Family(name: name, help: help, kind: .counter, labelNames: labelNames, samples: samples)
    }

    private func histogram<Key: SeriesKey>(
        _ name: String,
        _ help: String,
        _ series: HistogramSeries<Key>,
        _ bounds: [Double],
        labelNames: [String] = MetricsSnapshotBuilder.routeLabels
    ) -> MetricsSnapshot.Family {
        let samples = series.values
            .map { (values: $0.key.labelValues, data: $0.value) }
            .sorted { $0.values.lexicographicallyPrecedes($1.values) }
            .map { entry in
                var running: UInt64 = 0
                var buckets: [MetricsSnapshot.Bucket] = []
                buckets.reserveCapacity(bounds.count)
                for (bound, count) in zip(bounds, entry.data.counts) {
                    running &+= count
                    buckets.append(MetricsSnapshot.Bucket(upperBound: bound, cumulativeCount: running))
                }
                let histogram = MetricsSnapshot.Histogram(
                    buckets: buckets,
                    sum: entry.data.sum,
                    count: entry.data.count
                )
                return MetricsSnapshot.Sample(
                    labels: labels(labelNames, entry.values),
                    value: Double(entry.data.count),
                    histogram: histogram
                )
            }
        return MetricsSnapshot.Family(
            name: name,
            help: help,
            kind: .histogram,
            labelNames: labelNames,
            samples: samples
        )
    }

    private func labels(_ names: [String], _ values: [String]) -> [String: String] {
        Dictionary(zip(names, values), uniquingKeysWith: { first, _ in first })
    }

    private func quantiles(_ window: Window, route: String?, method: String?) -> MetricsSnapshot.Quantiles {
        let values = window.quantiles()
        return MetricsSnapshot.Quantiles(
            route: route,
            method: method,
            count: window.values.count,
            p50: values?.p50,
            p95: values?.p95,
            p99: values?.p99
        )
    }
}
