/// Receives every observation of a ``MetricsPlugin``: store it (``MetricsRegistry``) or forward it to another
/// metrics backend, such as swift-metrics.
///
/// `handle(_:)` is called synchronously on the task of the request, for many requests at once: implementations
/// must be thread-safe and fast, and must not block.
public protocol MetricsHandler: Sendable {
    /// Records one observation.
    ///
    /// - Parameter observation: What happened.
    func handle(_ observation: MetricsObservation)
}
