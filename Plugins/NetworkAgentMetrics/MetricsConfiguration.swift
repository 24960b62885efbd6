/// The buckets, windows and limits of a ``MetricsRegistry``.
public struct MetricsConfiguration: Sendable {
    /// The default latency buckets in seconds, those of the Prometheus client libraries:
    /// 5 ms, 10 ms, 25 ms, 50 ms, 100 ms, 250 ms, 500 ms, 1 s, 2.5 s, 5 s, 10 s.
    public static let defaultDurationBuckets: [Double] = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

    /// The default transfer phase buckets in seconds, finer than the request ones because a lookup, connect or
    /// handshake on a near network takes well under 5 ms: 100 µs, 250 µs, 500 µs, 1 ms, then
    /// ``defaultDurationBuckets``.
    public static let defaultPhaseBuckets: [Double] = [0.0001, 0.00025, 0.0005, 0.001, 0.0025] + defaultDurationBuckets

    /// The default body size buckets in bytes: powers of four from 64 B to 16 MiB.
    public static let defaultSizeBuckets: [Double] = [
        64, 256, 1024, 4096, 16_384, 65_536, 262_144, 1_048_576, 4_194_304, 16_777_216,
    ]

    /// The default number of most recent request durations per route and method kept for the quantiles: 1024.
    public static let defaultQuantileWindow = 1024

    /// The default number of label sets one metric may hold before new ones are folded into an overflow series:
    /// 1000.
    public static let defaultMaximumSeriesPerMetric = 1000

    /// Upper bounds (inclusive, in seconds) of the latency histograms; `+Inf` is always added.
    public let durationBuckets: [Double]
    /// Upper bounds (inclusive, in bytes) of the body size histograms; `+Inf` is always added.
    public let sizeBuckets: [Double]
    /// Upper bounds (inclusive, in seconds) of the transfer phase histogram; `+Inf` is always added.
    public let phaseBuckets: [Double]
    /// How many of the most recent request durations per route and method the quantiles are computed from.
    public let quantileWindow: Int
    /// How many label sets one metric may hold. Past that, observations with a new label set are recorded under one
    /// series whose labels are all `overflow`, so a route name that leaks an id cannot exhaust memory.
    public let maximumSeriesPerMetric: Int

    /// Creates a configuration. Bucket bounds are sorted, and duplicates and non-finite values dropped.
    ///
    /// - Parameters:
    ///   - durationBuckets: Latency bucket bounds in seconds. Defaults to ``defaultDurationBuckets``.
    ///   - sizeBuckets: Body size bucket bounds in bytes. Defaults to ``defaultSizeBuckets``.
    ///   - phaseBuckets: Transfer phase bucket bounds in seconds. Defaults to ``defaultPhaseBuckets``.
    ///   - quantileWindow: See ``quantileWindow``; at least 1. Defaults to ``defaultQuantileWindow``.
    ///   - maximumSeriesPerMetric: See ``maximumSeriesPerMetric``; at least 1. Defaults to
    ///     ``defaultMaximumSeriesPerMetric``.
    public init(
        durationBuckets: [Double] = defaultDurationBuckets,
        sizeBuckets: [Double] = defaultSizeBuckets,
        phaseBuckets: [Double] = defaultPhaseBuckets,
        quantileWindow: Int = defaultQuantileWindow,
        maximumSeriesPerMetric: Int = defaultMaximumSeriesPerMetric
    ) {
        self.durationBuckets = Self.bounds(durationBuckets)
        self.sizeBuckets = Self.bounds(sizeBuckets)
        self.phaseBuckets = Self.bounds(phaseBuckets)
        self.quantileWindow = max(1, quantileWindow)
        self.maximumSeriesPerMetric = max(1, maximumSeriesPerMetric)
    }

    private static func bounds(_ values: [Double]) -> [Double] {
        Array(Set(values.filter(\.isFinite))).sorted()
    }
}
