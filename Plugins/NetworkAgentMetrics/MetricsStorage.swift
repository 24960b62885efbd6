import NetworkAgent

/// The label values of one series, as stored by the registry: small concrete keys so that a lookup hashes a few
/// strings and allocates nothing.
protocol SeriesKey: Hashable, Sendable {
    /// The series folded into when a metric holds ``MetricsConfiguration/maximumSeriesPerMetric`` label sets.
    static var overflow: Self { get }
    /// The label values, in the family's label-name order.
    var labelValues: [String] { get }
}

/// The value of every label of the overflow series.
let overflowLabel = "overflow"

struct RouteKey: SeriesKey {
    let route: String
    let method: String
    /// The hash of `route` and `method`, worked out once: a finished request files the same key in five series
    /// (duration, both body sizes, the transfer phases, the quantile window), and each look-up hashed both strings
    /// again.
    let labelsHash: Int

    init(_ labels: MetricsLabels) {
        self.init(route: labels.route, method: labels.method)
    }

    init(route: String, method: String) {
        self.route = route
        self.method = method
        self.labelsHash = Self.hash(route: route, method: method)
    }

    /// The hash a key of `route` and `method` is filed under (the hash the synthesised `Hashable` would feed).
    static func hash(route: String, method: String) -> Int {
        var hasher = Hasher()
        hasher.combine(route)
        hasher.combine(method)
        return hasher.finalize()
    }

    static func == (lhs: RouteKey, rhs: RouteKey) -> Bool {
        lhs.labelsHash == rhs.labelsHash && lhs.route == rhs.route && lhs.method == rhs.method
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(labelsHash)
    }

    static let overflow = RouteKey(route: overflowLabel, method: overflowLabel)
    var labelValues: [String] { [route, method] }
}

struct OutcomeKey: SeriesKey {
    let route: String
    let method: String
    let statusClass: String
    let outcome: String
    /// `RouteKey`'s hash of `route` and `method`: the route's key is made for the same request anyway, so a
    /// look-up hashes only the other two labels.
    private let routeHash: Int

    init(route: RouteKey, statusClass: String, outcome: String) {
        self.route = route.route
        self.method = route.method
        self.statusClass = statusClass
        self.outcome = outcome
        self.routeHash = route.labelsHash
    }

    init(route: String, method: String, statusClass: String, outcome: String) {
        self.init(route: RouteKey(route: route, method: method), statusClass: statusClass, outcome: outcome)
    }

    static func == (lhs: OutcomeKey, rhs: OutcomeKey) -> Bool {
        lhs.routeHash == rhs.routeHash && lhs.route == rhs.route && lhs.method == rhs.method
            && lhs.statusClass == rhs.statusClass && lhs.outcome == rhs.outcome
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(routeHash)
        hasher.combine(statusClass)
        hasher.combine(outcome)
    }

    static let overflow = OutcomeKey(
        route: overflowLabel,
        method: overflowLabel,
        statusClass: overflowLabel,
        outcome: overflowLabel
    )
    var labelValues: [String] { [route, method, statusClass, outcome] }
}

struct RouteResultKey: SeriesKey {
    var route: String
    var method: String
    var result: String

    static let overflow = RouteResultKey(route: overflowLabel, method: overflowLabel, result: overflowLabel)
    var labelValues: [String] { [route, method, result] }
}

struct PhaseKey: SeriesKey {
    var route: String
    var method: String
    var phase: String

    static let overflow = PhaseKey(route: overflowLabel, method: overflowLabel, phase: overflowLabel)
    var labelValues: [String] { [route, method, phase] }
}

struct ResultKey: SeriesKey {
    var result: String

    static let overflow = ResultKey(result: overflowLabel)
    var labelValues: [String] { [result] }
}

struct CircuitTransitionKey: SeriesKey {
    var key: String
    var from: String
    var to: String

    static let overflow = CircuitTransitionKey(key: overflowLabel, from: overflowLabel, to: overflowLabel)
    var labelValues: [String] { [key, from, to] }
}

struct EventKey: SeriesKey {
    var source: String
    var name: String

    static let overflow = EventKey(source: overflowLabel, name: overflowLabel)
    var labelValues: [String] { [source, name] }
}

/// The series of one counter.
struct CounterSeries<Key: SeriesKey>: Sendable {
    var values: [Key: UInt64] = [:]

    mutating func add(_ amount: UInt64, to key: Key, limit: Int) {
        // One look-up for a series that exists (most observations); a new one is filed as before, or folded into
        // the overflow series once the limit is reached.
        if let index = values.index(forKey: key) {
            values.values[index] &+= amount
        } else {
            values[values.count < limit ? key : Key.overflow, default: 0] &+= amount
        }
    }
}

/// The observations of one histogram series: a count per bucket (not cumulative; the last is `+Inf`).
struct HistogramData: Sendable {
    var counts: [UInt64]
    var sum: Double = 0
    var count: UInt64 = 0

    init(bucketCount: Int) {
        counts = Array(repeating: 0, count: bucketCount + 1)
    }
}

/// The series of one histogram.
struct HistogramSeries<Key: SeriesKey>: Sendable {
    var values: [Key: HistogramData] = [:]

    /// Records `value`, which falls in bucket `index` (of `bucketCount` finite buckets; `bucketCount` is `+Inf`).
    mutating func observe(_ value: Double, bucket index: Int, bucketCount: Int, key: Key, limit: Int) {
        // As `CounterSeries.add`: one look-up for a series that exists.
        if let position = values.index(forKey: key) {
            values.values[position].record(value, bucket: index)
        } else {
            let key = values.count < limit ? key : Key.overflow
            values[key, default: HistogramData(bucketCount: bucketCount)].record(value, bucket: index)
        }
    }
}

extension HistogramData {
    mutating func record(_ value: Double, bucket index: Int) {
        counts[index] &+= 1
        sum += value
        count &+= 1
    }
}

/// The transfer phase histograms: per route and method, one histogram per phase in
/// ``MetricsTransferPhase/inOrder`` order, so that recording a request's phases is one dictionary lookup. The series
/// limit counts routes and methods, as for the other families.
struct PhaseSeries: Sendable {
    var values: [RouteKey: [HistogramData]] = [:]

    /// Records values into the histograms of `key` (the overflow key once `limit` routes are held).
    ///
    /// - Parameter record: Called once with the route's histograms, one per phase, to record into.
    mutating func update(key: RouteKey, bucketCount: Int, limit: Int, _ record: (inout [HistogramData]) -> Void) {
        // As `CounterSeries.add`: one look-up for a route that exists.
        if let index = values.index(forKey: key) {
            record(&values.values[index])
            return
        }
        let key = values.count < limit ? key : .overflow
        record(
            &values[
                key,
                default: Array(
                    repeating: HistogramData(bucketCount: bucketCount),
                    count: MetricsTransferPhase.inOrder.count
                )
            ]
        )
    }

    /// Every histogram that holds an observation, under its route, method and phase labels.
    var series: HistogramSeries<PhaseKey> {
        var series = HistogramSeries<PhaseKey>()
        for (route, histograms) in values {
            for (phase, data) in zip(MetricsTransferPhase.inOrder, histograms) where data.count > 0 {
                series.values[PhaseKey(route: route.route, method: route.method, phase: phase.rawValue)] = data
            }
        }
        return series
    }
}

/// The most recent values, up to a capacity, in a ring.
struct Window: Sendable {
    var values: [Double] = []
    var next = 0

    mutating func add(_ value: Double, capacity: Int) {
        if values.count < capacity {
            values.append(value)
        } else {
            values[next] = value
            next = (next + 1) % capacity
        }
    }

    /// p50, p95 and p99 by nearest rank: the smallest value with at least p·n values at or below it.
    func quantiles() -> (p50: Double, p95: Double, p99: Double)? {
        guard !values.isEmpty else { return nil }
        let sorted = values.sorted()
        func rank(_ p: Double) -> Double {
            let index = Int((p * Double(sorted.count)).rounded(.up)) - 1
            return sorted[min(max(index, 0), sorted.count - 1)]
        }
        return (rank(0.5), rank(0.95), rank(0.99))
    }
}

/// The index of the bucket a value falls in: the first bound it does not exceed, or `bounds.count` (`+Inf`).
func bucketIndex(of value: Double, in bounds: [Double]) -> Int {
    var low = 0
    var high = bounds.count
    while low < high {
        let middle = (low + high) / 2
        if value <= bounds[middle] {
            high = middle
        } else {
            low = middle + 1
        }
    }
    return low
}

/// Everything a registry counts, guarded by its mutex.
struct MetricsState: Sendable {
    var requests = CounterSeries<OutcomeKey>()
    var requestDuration = HistogramSeries<RouteKey>()
    var requestBodyBytes = HistogramSeries<RouteKey>()
    var responseBodyBytes = HistogramSeries<RouteKey>()
    var responseHeaders = HistogramSeries<RouteKey>()
    var transferPhases = PhaseSeries()
    var attempts = CounterSeries<OutcomeKey>()
    var attemptDuration = HistogramSeries<RouteKey>()
    var attemptRequestBodyBytes = CounterSeries<RouteKey>()
    var attemptResponseBodyBytes = CounterSeries<RouteKey>()
    var retries = CounterSeries<RouteKey>()
    var tokenRefreshes = CounterSeries<ResultKey>()
    var cacheEvents = CounterSeries<RouteResultKey>()
    var pluginEvents = CounterSeries<EventKey>()
    /// The last state of each circuit breaker key, from `circuit_breaker.state_changed` events.
    var circuitStates: [String: NetworkAgentEvent.CircuitState] = [:]
    var circuitTransitions = CounterSeries<CircuitTransitionKey>()
    var windows: [RouteKey: Window] = [:]
    var overallWindow = Window()
    /// The requests inside the exchange (``MetricsRegistry/inFlight``); kept by ``MetricsRegistry/reset()``.
    var inFlight = 0
}
