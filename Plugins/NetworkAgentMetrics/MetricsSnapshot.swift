/// Everything a ``MetricsRegistry`` holds at one moment: every metric family with its series, and the latency
/// quantiles. `Codable`, so `JSONEncoder().encode(registry.snapshot())` is the JSON export.
public struct MetricsSnapshot: Codable, Hashable, Sendable {
    /// The metric families, in a fixed order, each with its series sorted by label values.
    public var families: [Family]
    /// p50/p95/p99 of the recent request durations per route and method, sorted by route and method.
    public var latency: [Quantiles]
    /// p50/p95/p99 of the recent request durations of all routes together.
    public var overallLatency: Quantiles

    /// Creates a snapshot.
    ///
    /// - Parameters:
    ///   - families: The metric families.
    ///   - latency: The quantiles per route and method.
    ///   - overallLatency: The quantiles of all routes together.
    public init(families: [Family], latency: [Quantiles], overallLatency: Quantiles) {
        self.families = families
        self.latency = latency
        self.overallLatency = overallLatency
    }

    /// One metric: a name, its help text, its type and its series.
    public struct Family: Codable, Hashable, Sendable {
        /// The metric type.
        public enum Kind: String, Codable, Hashable, Sendable {
            /// Only goes up.
            case counter
            /// Goes up and down.
            case gauge
            /// Observations counted in cumulative buckets, with their sum and count.
            case histogram
        }

        /// The metric name, e.g. `networkagent_requests_total`.
        public var name: String
        /// What the metric measures.
        public var help: String
        /// The metric type.
        public var kind: Kind
        /// The label names of every series, in exposition order (`le` of histograms not included).
        public var labelNames: [String]
        /// The series, one per label set seen.
        public var samples: [Sample]

        /// Creates a family.
        ///
        /// - Parameters:
        ///   - name: The metric name.
        ///   - help: What the metric measures.
        ///   - kind: The metric type.
        ///   - labelNames: The label names, in order.
        ///   - samples: The series.
        public init(name: String, help: String, kind: Kind, labelNames: [String], samples: [Sample]) {
            self.name = name
            self.help = help
            self.kind = kind
            self.labelNames = labelNames
            self.samples = samples
        }
    }

    /// One series of a family.
    public struct Sample: Codable, Hashable, Sendable {
        /// The label values by label name.
        public var labels: [String: String]
        /// The value of a counter or gauge; the number of observations of a histogram.
        public var value: Double
        /// The buckets, sum and count of a histogram series; `nil` for counters and gauges.
        public var histogram: Histogram?

        /// Creates a sample.
        ///
        /// - Parameters:
        ///   - labels: The label values by label name.
        ///   - value: The value (a histogram's count).
        ///   - histogram: The histogram data, for a histogram series.
        public init(labels: [String: String], value: Double, histogram: Histogram? = nil) {
            self.labels = labels
            self.value = value
            self.histogram = histogram
        }
    }

    /// The data of one histogram series.
    public struct Histogram: Codable, Hashable, Sendable {
        /// The finite buckets in increasing order, each with the number of observations less than or equal to its
        /// bound. The `+Inf` bucket is ``count``.
        public var buckets: [Bucket]
        /// The sum of all observations.
        public var sum: Double
        /// The number of observations.
        public var count: UInt64

        /// Creates histogram data.
        ///
        /// - Parameters:
        ///   - buckets: The finite cumulative buckets.
        ///   - sum: The sum of the observations.
        ///   - count: The number of observations.
        public init(buckets: [Bucket], sum: Double, count: UInt64) {
            self.buckets = buckets
            self.sum = sum
            self.count = count
        }

        /// The cumulative count of the bucket with this upper bound, ``count`` for `+infinity`.
        ///
        /// - Parameter upperBound: The bucket's upper bound (`le`).
        /// - Returns: The observations less than or equal to `upperBound`, or `nil` when there is no such bucket.
        public func cumulativeCount(le upperBound: Double) -> UInt64? {
            if upperBound == .infinity { return count }
            return buckets.first { $0.upperBound == upperBound }?.cumulativeCount
        }
    }

    /// One cumulative histogram bucket.
    public struct Bucket: Codable, Hashable, Sendable {
        /// The inclusive upper bound (`le`).
        public var upperBound: Double
        /// The number of observations less than or equal to ``upperBound``.
        public var cumulativeCount: UInt64

        /// Creates a bucket.
        ///
        /// - Parameters:
        ///   - upperBound: The inclusive upper bound.
        ///   - cumulativeCount: The observations at or below it.
        public init(upperBound: Double, cumulativeCount: UInt64) {
            self.upperBound = upperBound
            self.cumulativeCount = cumulativeCount
        }
    }

    /// Latency quantiles over a window of recent request durations.
    ///
    /// Computed exactly (nearest rank) over the last ``MetricsConfiguration/quantileWindow`` durations: they describe
    /// recent traffic, not all time. As estimates of the underlying distribution from `n` samples, the rank of the
    /// p-th quantile has a standard error of about `sqrt(p(1-p)/n)`: with `n = 1024` that is ±1.6 percentiles for
    /// p50, ±0.7 for p95 and ±0.3 for p99.
    public struct Quantiles: Codable, Hashable, Sendable {
        /// The route, or `nil` for all routes together.
        public var route: String?
        /// The method, or `nil` for all routes together.
        public var method: String?
        /// How many durations the window holds.
        public var count: Int
        /// The median in seconds, `nil` when the window is empty.
        public var p50: Double?
        /// The 95th percentile in seconds, `nil` when the window is empty.
        public var p95: Double?
        /// The 99th percentile in seconds, `nil` when the window is empty.
        public var p99: Double?

        /// Creates quantiles.
        ///
        /// - Parameters:
        ///   - route: The route, `nil` for all.
        ///   - method: The method, `nil` for all.
        ///   - count: The number of durations in the window.
        ///   - p50: The median.
        ///   - p95: The 95th percentile.
        ///   - p99: The 99th percentile.
        public init(route: String?, method: String?, count: Int, p50: Double?, p95: Double?, p99: Double?) {
            self.route = route
            self.method = method
            self.count = count
            self.p50 = p50
            self.p95 = p95
            self.p99 = p99
        }
    }

    /// The family with this name.
    ///
    /// - Parameter name: The metric name, e.g. `networkagent_requests_total`.
    /// - Returns: The family, or `nil` when there is none.
    public func family(_ name: String) -> Family? {
        families.first { $0.name == name }
    }

    /// The value of the series of a counter or gauge with exactly these labels.
    ///
    /// - Parameters:
    ///   - name: The metric name.
    ///   - labels: Every label of the series.
    /// - Returns: The value, or `nil` when there is no such series.
    public func value(_ name: String, _ labels: [String: String] = [:]) -> Double? {
        family(name)?.samples.first { $0.labels == labels }?.value
    }

    /// The sum of a counter's series whose labels include these.
    ///
    /// - Parameters:
    ///   - name: The metric name.
    ///   - labels: The labels to match; others may have any value.
    /// - Returns: The total, `0` when nothing matches.
    public func total(_ name: String, matching labels: [String: String] = [:]) -> Double {
        (family(name)?.samples ?? [])
            .filter { sample in labels.allSatisfy { sample.labels[$0.key] == $0.value } }
            .reduce(0) { $0 + $1.value }
    }

    /// The histogram series with exactly these labels.
    ///
    /// - Parameters:
    ///   - name: The metric name.
    ///   - labels: Every label of the series.
    /// - Returns: The histogram data, or `nil` when there is no such series.
    public func histogram(_ name: String, _ labels: [String: String]) -> Histogram? {
        family(name)?.samples.first { $0.labels == labels }?.histogram
    }

    /// The latency quantiles of one route and method.
    ///
    /// - Parameters:
    ///   - route: The route.
    ///   - method: The method, e.g. `GET`.
    /// - Returns: The quantiles, or `nil` when that route and method saw no request.
    public func latency(route: String, method: String) -> Quantiles? {
        latency.first { $0.route == route && $0.method == method }
    }
}
