import Foundation
import NetworkAgent

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Measures every request (and, registered a second time, every network attempt) of a provider and hands the
/// measurements to ``MetricsHandler``s such as a ``MetricsRegistry``.
///
/// ```swift
/// let metrics = MetricsRegistry()
/// let provider = NetworkAgentProvider<Api>(plugins: [
///     .metrics(metrics),           // first: outermost, sees every request and the events inside it
///     .retry(),
///     .metricsAttempts(metrics),   // optional, last: times every attempt the retry makes
/// ])
/// ```
///
/// What it measures, in ``/NetworkAgent/NetworkAgentPlugin/intercept(_:endpoint:next:)``:
/// - per request (``Level/requests``): duration from entering the exchange to leaving it, status code and class,
///   outcome, request and response body sizes, the in-flight count; the time to response headers of every exchange
///   with the server (from the transport's ``/NetworkAgent/NetworkAgentEvent/Kind/responseHeaders(after:)`` events);
///   and the events other plugins emit inside the request (retries, token refreshes, cache results), through
///   ``/NetworkAgent/NetworkAgentEvents``, told apart by their typed ``/NetworkAgent/NetworkAgentEvent/kind``;
/// - per attempt (``Level/attempts``): the same for each call of the rest of the chain, which the innermost
///   position makes one network attempt.
///
/// When the transport measured per-phase timings (`URLResponse.transferTimings`, e.g. a libcurl
/// transport; never ``/NetworkAgent/URLSessionTransport``), every measurement carries those of its response, and a
/// ``MetricsRegistry`` records the request's as one histogram per ``MetricsTransferPhase``.
///
/// Labels are low-cardinality by construction: the route comes from the endpoint (``MetricsRouteNaming`` or the enum
/// case name, never the URL), the method, the status class and the outcome.
///
/// A streamed call (``/NetworkAgent/NetworkAgentProvider/stream(endpoint:progress:)``) with a 2xx response is
/// measured when its body ends (``/NetworkAgent/NetworkAgentExchange/onStreamEnd(_:)``): the duration runs to that
/// end, the response size is the bytes the caller was handed, and the outcome is `success` for a body read to its
/// end, the failure's (e.g. `transport_error:connection_lost`) for one that broke off, `cancelled` for one the
/// caller gave up (or that never reached it).
///
/// A call that fails before the exchange (its request cannot be built, or another plugin's `onRequest` throws) is
/// counted through ``onFailureBeforeExchange(_:endpoint:)``, with its error's outcome, no status and a zero duration,
/// so that every call the provider starts ends as exactly one outcome. The outcome is otherwise that of the
/// exchange: a response that a later `onResponse` (such as `.validate()`) turns into an error still counts by its
/// status, e.g. a 500 is `http_error` with status class `5xx`.
public struct MetricsPlugin: NetworkAgentPlugin {
    /// What one call of the plugin's `intercept` stands for.
    public enum Level: Sendable, Hashable {
        /// A whole request: register the plugin first, outermost. Counts requests, the in-flight gauge, times to
        /// headers and plugin events.
        case requests
        /// One network attempt: register the plugin last, innermost, so that each call is one send.
        case attempts
    }

    /// The handlers that receive every observation, in order.
    public let handlers: [any MetricsHandler]
    /// Whether each call is a request or an attempt.
    public let level: Level
    /// The time the plugin's clock has measured since the plugin was made; durations are differences of it.
    private let elapsed: @Sendable () -> Duration
    /// The registry when it is the only handler (what ``metrics(_:forwardingTo:)`` makes without forwarding): it is
    /// then given each observation by a direct call of the method its ``MetricsRegistry/handle(_:)`` would call,
    /// without wrapping it in a ``MetricsObservation`` (a value of some 300 bytes, copied on its way) and without the
    /// protocol's dispatch.
    private let soleRegistry: MetricsRegistry?

    /// Creates a metrics plugin.
    ///
    /// - Parameters:
    ///   - handlers: Receive every observation, e.g. a ``MetricsRegistry`` and a bridge to another backend.
    ///   - level: Whether each call is a request (registered first) or an attempt (registered last).
    ///   - clock: Where durations are read; defaults to `ContinuousClock`. Tests pass a `ManualClock` from
    ///     NetworkAgentTesting.
    public init(
        handlers: [any MetricsHandler],
        level: Level = .requests,
        clock: any Clock<Duration> = ContinuousClock()
    ) {
        self.handlers = handlers
        self.level = level
        self.elapsed = clock.stopwatch()
        self.soleRegistry = handlers.count == 1 ? handlers.first as? MetricsRegistry : nil
    }

    /// Measures the exchange.
    ///
    /// - Parameters:
    ///   - request: The request handed to the exchange.
    ///   - endpoint: The endpoint of the call, which gives the route label.
    ///   - next: The rest of the exchange.
    /// - Returns: What `next` returns, unchanged.
    /// - Throws: What `next` throws, unchanged.
    public func intercept(
        _ request: URLRequest,
        endpoint: any NetworkAgentEndpoint,
        next: NetworkAgentExchange
    ) async throws -> (data: Data, response: URLResponse) {
        let labels = MetricsLabels(endpoint: endpoint)
        let requestBodyBytes = Self.bodySize(of: request)
        switch level {
        case .requests:
            // The registry's key of the route, made once for the request's observations.
            let route = soleRegistry.map { _ in RouteKey(labels) }
            if let soleRegistry {
                soleRegistry.startRequest()
            } else {
                report(.requestStarted(labels))
            }
            let start = elapsed()
            do {
                let result = try await NetworkAgentEvents.observing(observer(labels, route: route)) {
                    try await next(request)
                }
                finish(result, next: next, labels, start, requestBodyBytes, route: route)
                return result
            } catch {
                reportFinished(measurement(labels, start, requestBodyBytes, error: error), route: route)
                throw error
            }
        case .attempts:
            let start = elapsed()
            do {
                let result = try await next(request)
                finish(result, next: next, labels, start, requestBodyBytes)
                return result
            } catch {
                reportFinished(measurement(labels, start, requestBodyBytes, error: error))
                throw error
            }
        }
    }

    /// Counts a call that failed before its exchange, at the ``Level/requests`` level (no attempt was made).
    ///
    /// - Parameters:
    ///   - error: What failed the call.
    ///   - endpoint: The endpoint of the call, which gives the route label.
    public func onFailureBeforeExchange(_ error: any Error, endpoint: any NetworkAgentEndpoint) async {
        guard level == .requests else { return }
        let labels = MetricsLabels(endpoint: endpoint)
        report(.requestStarted(labels))
        report(
            .requestFinished(
                MetricsMeasurement(
                    labels: labels,
                    statusCode: nil,
                    outcome: MetricsOutcome(error: error),
                    duration: .zero,
                    requestBodyBytes: nil,
                    responseBodyBytes: nil
                )
            )
        )
    }

    /// Reports the measurement of `result` now or, for the 2xx head of a streamed body, when the body ends.
    private func finish(
        _ result: (data: Data, response: URLResponse),
        next: NetworkAgentExchange,
        _ labels: MetricsLabels,
        _ start: Duration,
        _ requestBodyBytes: Int?,
        route: RouteKey? = nil
    ) {
        guard next.isStreaming, let http = result.response as? HTTPURLResponse, (200..<300).contains(http.statusCode)
        else {
            reportFinished(measurement(labels, start, requestBodyBytes, result: result), route: route)
            return
        }
        next.onStreamEnd { [handlers, level, soleRegistry, elapsed] end in
            let outcome: MetricsOutcome =
                switch end.outcome {
                case .completed: .success
                case .failed(let error): MetricsOutcome(error: error)
                case .cancelled: .cancelled
                }
            let measurement = MetricsMeasurement(
                labels: labels,
                statusCode: http.statusCode,
                outcome: outcome,
                duration: elapsed() - start,
                requestBodyBytes: requestBodyBytes,
                responseBodyBytes: end.bytes,
                transferTimings: http.transferTimings
            )
            Self.reportFinished(measurement, level: level, to: handlers, soleRegistry: soleRegistry)
        }
    }

    private func report(_ observation: MetricsObservation) {
        Self.report(observation, to: handlers)
    }

    /// Reports a finished request or attempt (by ``level``): ``MetricsObservation/requestFinished(_:)`` or
    /// ``MetricsObservation/attemptFinished(_:)``.
    /// `route` is the registry's key of the measurement's labels, when made already.
    private func reportFinished(_ measurement: MetricsMeasurement, route: RouteKey? = nil) {
        Self.reportFinished(measurement, level: level, to: handlers, soleRegistry: soleRegistry, route: route)
    }

    private static func reportFinished(
        _ measurement: MetricsMeasurement,
        level: Level,
        to handlers: [any MetricsHandler],
        soleRegistry: MetricsRegistry?,
        route: RouteKey? = nil
    ) {
        switch (level, soleRegistry) {
        case (.requests, let registry?): registry.recordRequest(measurement, route: route)
        case (.attempts, let registry?): registry.recordAttempt(measurement)
        case (.requests, nil): report(.requestFinished(measurement), to: handlers)
        case (.attempts, nil): report(.attemptFinished(measurement), to: handlers)
        }
    }

    /// The observer of the events inside a request: each becomes the observation ``observation(of:labels:)`` makes.
    private func observer(_ labels: MetricsLabels, route: RouteKey?) -> NetworkAgentEvents.Observer {
        guard let soleRegistry, let route else {
            return { [handlers] event in Self.report(Self.observation(of: event, labels: labels), to: handlers) }
        }
        // What the registry's `handle` does with those observations.
        return { event in
            if case .responseHeaders(let after) = event.kind, after >= .zero {
                soleRegistry.recordResponseHeaders(labels, seconds: after.metricsSeconds, route: route)
            } else {
                soleRegistry.recordEvent(event.kind, labels: labels)
            }
        }
    }

    private static func report(_ observation: MetricsObservation, to handlers: [any MetricsHandler]) {
        for handler in handlers { handler.handle(observation) }
    }

    /// The transport's time to headers becomes ``MetricsObservation/responseHeaders(_:seconds:)``; every other event
    /// is passed on as it is.
    private static func observation(of event: NetworkAgentEvent, labels: MetricsLabels) -> MetricsObservation {
        if case .responseHeaders(let after) = event.kind, after >= .zero {
            return .responseHeaders(labels, seconds: after.metricsSeconds)
        }
        return .event(labels, event)
    }

    private func measurement(
        _ labels: MetricsLabels,
        _ start: Duration,
        _ requestBodyBytes: Int?,
        result: (data: Data, response: URLResponse)
    ) -> MetricsMeasurement {
        MetricsMeasurement(
            labels: labels,
            statusCode: (result.response as? HTTPURLResponse)?.statusCode,
            outcome: MetricsOutcome(response: result.response),
            duration: elapsed() - start,
            requestBodyBytes: requestBodyBytes,
            responseBodyBytes: result.data.count,
            transferTimings: result.response.transferTimings
        )
    }

    private func measurement(
        _ labels: MetricsLabels,
        _ start: Duration,
        _ requestBodyBytes: Int?,
        error: any Error
    ) -> MetricsMeasurement {
        let failure = error as? NetworkAgentError
        return MetricsMeasurement(
            labels: labels,
            statusCode: failure?.statusCode,
            outcome: MetricsOutcome(error: error),
            duration: elapsed() - start,
            requestBodyBytes: requestBodyBytes,
            responseBodyBytes: failure?.response == nil ? nil : failure?.data?.count ?? 0,
            transferTimings: failure?.response?.transferTimings
        )
    }

    /// The body size: `httpBody`'s count, a ``/NetworkAgent/FileBackedBodyStream``'s file size, `nil` for any other
    /// stream.
    static func bodySize(of request: URLRequest) -> Int? {
        if let body = request.httpBody { return body.count }
        guard let stream = request.httpBodyStream else { return 0 }
        return (stream as? FileBackedBodyStream)?.fileSize
    }
}

extension NetworkAgentPlugin where Self == MetricsPlugin {
    /// Measures every request into a registry. Register it first, so that it is the outermost interceptor.
    ///
    /// - Parameters:
    ///   - registry: Where the measurements are stored.
    ///   - handlers: More handlers that receive every observation, e.g. a bridge to swift-metrics.
    /// - Returns: The plugin.
    public static func metrics(_ registry: MetricsRegistry, forwardingTo handlers: [any MetricsHandler] = []) -> Self {
        MetricsPlugin(handlers: [registry] + handlers)
    }

    /// Measures every network attempt into a registry. Register it last, so that each call is one send.
    ///
    /// - Parameters:
    ///   - registry: Where the measurements are stored.
    ///   - handlers: More handlers that receive every observation.
    /// - Returns: The plugin.
    public static func metricsAttempts(
        _ registry: MetricsRegistry,
        forwardingTo handlers: [any MetricsHandler] = []
    ) -> Self {
        MetricsPlugin(handlers: [registry] + handlers, level: .attempts)
    }
}
