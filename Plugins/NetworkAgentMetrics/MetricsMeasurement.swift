import NetworkAgent

/// What was measured for one finished request or network attempt.
public struct MetricsMeasurement: Hashable, Sendable {
    /// The route and method.
    public var labels: MetricsLabels
    /// The HTTP status code, or `nil` when there was no HTTP response (a transport failure, a timeout).
    public var statusCode: Int?
    /// How it ended.
    public var outcome: MetricsOutcome
    /// From entering the plugin's `intercept` to leaving it, on the plugin's clock.
    public var duration: Duration
    /// The size of the request body, or `nil` when it is a stream of unknown length. A body without bytes is `0`.
    public var requestBodyBytes: Int?
    /// The size of the response body, or `nil` when there was no response.
    public var responseBodyBytes: Int?
    /// The per-phase timings the transport put on the response (`URLResponse.transferTimings`), or
    /// `nil` when it measured none (``/NetworkAgent/URLSessionTransport`` never does) or there was no response.
    ///
    /// For a request they are those of the exchange it ended with: the last attempt's, and of a redirected
    /// request the last hop's. ``MetricsRegistry`` records them per ``MetricsTransferPhase`` for requests only.
    public var transferTimings: HTTPTransferTimings?

    /// Creates a measurement.
    ///
    /// - Parameters:
    ///   - labels: The route and method.
    ///   - statusCode: The HTTP status code, if there was an HTTP response.
    ///   - outcome: How it ended.
    ///   - duration: How long it took.
    ///   - requestBodyBytes: The request body size, if known.
    ///   - responseBodyBytes: The response body size, if there was a response.
    ///   - transferTimings: The response's per-phase timings, if the transport measured them.
    public init(
        labels: MetricsLabels,
        statusCode: Int?,
        outcome: MetricsOutcome,
        duration: Duration,
        requestBodyBytes: Int?,
        responseBodyBytes: Int?,
        transferTimings: HTTPTransferTimings? = nil
    ) {
        self.labels = labels
        self.statusCode = statusCode
        self.outcome = outcome
        self.duration = duration
        self.requestBodyBytes = requestBodyBytes
        self.responseBodyBytes = responseBodyBytes
        self.transferTimings = transferTimings
    }

    /// The `status_class` label: `1xx` … `5xx`, `none` without an HTTP response, `other` for a status outside
    /// 100…599.
    public var statusClass: String { Self.statusClass(of: statusCode) }

    /// ``duration`` in seconds.
    public var seconds: Double { duration.metricsSeconds }

    /// The `status_class` label of a status code.
    ///
    /// - Parameter statusCode: The status code, or `nil` when there was no HTTP response.
    /// - Returns: `1xx` … `5xx`, `none` or `other`.
    public static func statusClass(of statusCode: Int?) -> String {
        guard let statusCode else { return "none" }
        switch statusCode {
        case 100..<200: return "1xx"
        case 200..<300: return "2xx"
        case 300..<400: return "3xx"
        case 400..<500: return "4xx"
        case 500..<600: return "5xx"
        default: return "other"
        }
    }
}

extension Duration {
    /// `timeInterval` (the package's one conversion to seconds), with the same result, without `components`'
    /// 128-bit division by 10^18 for a duration from zero up to a second (nearly every duration and phase a request
    /// records): there `components` is zero seconds and the attoseconds themselves, and `0.0 + x` is `x`. Each
    /// request converts eight durations (its own, its time to headers, six transfer phases).
    var metricsSeconds: Double { Self.seconds(attoseconds: attoseconds) }

    /// ``metricsSeconds`` of the duration of `attoseconds`.
    static func seconds(attoseconds: Int128) -> Double {
        guard attoseconds >= 0, attoseconds < 1_000_000_000_000_000_000 else {
            return Duration(attoseconds: attoseconds).timeInterval
        }
        return Double(Int64(attoseconds)) / 1e18
    }
}
