import NetworkAgent

/// One thing the metrics plugin observed, handed to every ``MetricsHandler``.
public enum MetricsObservation: Equatable, Sendable {
    /// A request entered the exchange: the in-flight gauge goes up.
    case requestStarted(MetricsLabels)
    /// A request left the exchange, with or without a response: the in-flight gauge goes down.
    case requestFinished(MetricsMeasurement)
    /// A network attempt finished. Only reported by a plugin registered with ``MetricsPlugin/Level/attempts``.
    case attemptFinished(MetricsMeasurement)
    /// The transport received response headers this many seconds after it started sending, during a request.
    ///
    /// Reported once per exchange with the server that got as far as headers: every attempt and every redirect hop
    /// (from the transport's ``/NetworkAgent/NetworkAgentEvent/Kind/responseHeaders(after:)`` event).
    case responseHeaders(MetricsLabels, seconds: Double)
    /// Another plugin emitted an event during a request (a retry, a token refresh, a cache hit…); switch over its
    /// ``/NetworkAgent/NetworkAgentEvent/kind``.
    case event(MetricsLabels, NetworkAgentEvent)
}
