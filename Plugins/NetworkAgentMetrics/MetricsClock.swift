/// Where a ``MetricsPlugin`` reads the time: a monotonic reading as the time since a fixed origin.
///
/// The default is ``continuous``; tests inject a manual clock to put durations exactly where they want them.
public struct MetricsClock: Sendable {
    /// The time elapsed since the clock's origin; must never go backwards.
    public let now: @Sendable () -> Duration

    /// Creates a clock.
    ///
    /// - Parameter now: Returns the time since a fixed origin; must never go backwards.
    public init(now: @escaping @Sendable () -> Duration) {
        self.now = now
    }

    /// `ContinuousClock`: monotonic, and it keeps counting while the system sleeps.
    public static let continuous: MetricsClock = {
        let origin = ContinuousClock.now
        return MetricsClock { origin.duration(to: .now) }
    }()
}
