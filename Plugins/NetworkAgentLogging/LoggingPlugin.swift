import Foundation
import NetworkAgent

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Logs what a provider sends and receives, with secrets redacted: requests as handed to the network exchange,
/// responses, failures with their durations, and the events other plugins emit meanwhile (retries, cache answers,
/// token refreshes).
///
/// It works in ``intercept(_:endpoint:next:)``, so it logs the request after every `onRequest` and times each
/// exchange with `ContinuousClock`. Where it sits decides what an "exchange" is: registered before a retry plugin
/// it logs a call once and shows the retries as events; registered after it, it logs every attempt.
///
/// Logging never changes the request or the response and never throws: errors pass through unchanged.
///
/// A streamed call's 2xx response is logged twice: its head when it arrives (`streamed body`), and a
/// ``LogRecord/Kind/streamEnd`` record when the caller is done with the body, with the bytes it was handed, the
/// time since the request and whether the body completed, failed (an ``LogRecord/Severity/error``) or was cancelled.
///
/// ```swift
/// let provider = NetworkAgentProvider<Api>(plugins: [.logging(.headers)])
/// ```
public struct LoggingPlugin: NetworkAgentPlugin {
    /// The default cap on printed body text: 4096 bytes of UTF-8; the rest is counted, not printed.
    public static let defaultBodyLimit = 4_096

    /// How much is logged.
    public let level: LogLevel
    /// What is hidden in URLs, headers and bodies.
    public let redaction: RedactionPolicy
    /// The most bytes of body text printed per body at ``LogLevel/body``.
    public let bodyLimit: Int
    /// Whether JSON bodies are pretty-printed (keys sorted) at ``LogLevel/body``.
    public let prettyPrintsJSON: Bool
    /// Whether each request is also logged as a redacted cURL command (a ``LogRecord/Kind/curl`` record).
    public let logsCURLCommands: Bool
    /// Where records go.
    public let sink: LogSink
    private let calls = CallCounter()

    /// Creates a logging plugin.
    ///
    /// - Parameters:
    ///   - level: How much is logged; defaults to ``LogLevel/basic``.
    ///   - redaction: What is hidden; defaults to ``RedactionPolicy/init()``.
    ///   - bodyLimit: The most bytes of body text printed per body; defaults to ``defaultBodyLimit``.
    ///   - prettyPrintsJSON: Whether JSON bodies are pretty-printed; defaults to `false`.
    ///   - logsCURLCommands: Whether each request is also logged as a cURL command; defaults to `false`.
    ///   - sink: Where records go; defaults to ``LogSink/standardError``.
    public init(
        level: LogLevel = .basic,
        redaction: RedactionPolicy = RedactionPolicy(),
        bodyLimit: Int = defaultBodyLimit,
        prettyPrintsJSON: Bool = false,
        logsCURLCommands: Bool = false,
        sink: LogSink = .standardError
    ) {
        self.level = level
        self.redaction = redaction
        self.bodyLimit = max(0, bodyLimit)
        self.prettyPrintsJSON = prettyPrintsJSON
        self.logsCURLCommands = logsCURLCommands
        self.sink = sink
    }

    /// Logs the request, runs the rest of the exchange while logging the events emitted in it, then logs the
    /// response or the failure.
    ///
    /// - Parameters:
    ///   - request: The request handed to the exchange.
    ///   - endpoint: The endpoint of the call.
    ///   - next: The rest of the exchange.
    /// - Returns: What `next` returns, unchanged.
    /// - Throws: What `next` throws, unchanged.
    public func intercept(
        _ request: URLRequest,
        endpoint: any NetworkAgentEndpoint,
        next: NetworkAgentExchange
    ) async throws -> (data: Data, response: URLResponse) {
        guard level > .none else { return try await next(request) }
        let callID = calls.next()
        // Records the sink would drop are never built: requests, responses and cURL commands are `info`, events
        // `debug` (and without a sink for them, the plugin does not listen to events at all), failures `error`.
        guard sink.keeps(.info) else { return try await logErrorsOnly(request, callID: callID, next: next) }
        let formatter = makeFormatter(for: request, callID: callID, agent: next.agent)
        sink(formatter.requestRecord())
        if logsCURLCommands {
            sink(formatter.curlRecord())
        }
        let clock = ContinuousClock()
        let start = clock.now
        do {
            let result =
                if sink.keeps(.debug) {
                    try await NetworkAgentEvents.observing({ [sink] event in
                        sink(formatter.eventRecord(event))
                    }) {
                        try await next(request)
                    }
                } else {
                    try await next(request)
                }
            if next.isStreaming, let http = result.response as? HTTPURLResponse, (200..<300).contains(http.statusCode) {
                // The body goes to the caller: log the head now and the bytes streamed when the body ends.
                sink(formatter.streamHeadRecord(http, duration: start.duration(to: clock.now)))
                next.onStreamEnd { [sink] end in
                    let record = formatter.streamEndRecord(end, response: http, duration: start.duration(to: clock.now))
                    sink(record)
                }
            } else {
                sink(
                    formatter.responseRecord(
                        result.response,
                        data: result.data,
                        duration: start.duration(to: clock.now)
                    )
                )
            }
            return result
        } catch {
            sink(formatter.failureRecord(error, duration: start.duration(to: clock.now)))
            throw error
        }
    }

    /// The formatter of one call's records.
    private func makeFormatter(for request: URLRequest, callID: Int, agent: NetworkAgent) -> RecordFormatter {
        RecordFormatter(
            level: level,
            callID: callID,
            // The `User-Agent` the transport adds shows only in headers and cURL commands: below `.headers` without
            // them, the request is not copied to add it.
            request: level >= .headers || logsCURLCommands ? Self.asSent(request, agent: agent) : request,
            renderer: BodyRenderer(policy: redaction, limit: bodyLimit, prettyPrintsJSON: prettyPrintsJSON)
        )
    }

    /// ``intercept(_:endpoint:next:)`` for a sink that keeps only errors: the failure record, or the end record of
    /// a streamed body (an error when the body failed), each formatted only when it happens.
    private func logErrorsOnly(
        _ request: URLRequest,
        callID: Int,
        next: NetworkAgentExchange
    ) async throws -> (data: Data, response: URLResponse) {
        let clock = ContinuousClock()
        let start = clock.now
        do {
            let result = try await next(request)
            if next.isStreaming, let http = result.response as? HTTPURLResponse, (200..<300).contains(http.statusCode) {
                let agent = next.agent
                next.onStreamEnd { [sink, self] end in
                    let formatter = makeFormatter(for: request, callID: callID, agent: agent)
                    sink(formatter.streamEndRecord(end, response: http, duration: start.duration(to: clock.now)))
                }
            }
            return result
        } catch {
            let formatter = makeFormatter(for: request, callID: callID, agent: next.agent)
            sink(formatter.failureRecord(error, duration: start.duration(to: clock.now)))
            throw error
        }
    }

    /// The request with the defaults the agent adds when sending (the `User-Agent`), for display only.
    private static func asSent(_ request: URLRequest, agent: NetworkAgent) -> URLRequest {
        guard request.headerField("User-Agent") == nil else { return request }
        var shown = request
        shown.setValue(agent.configuration.userAgent, forHTTPHeaderField: "User-Agent")
        return shown
    }
}

/// Numbers the calls a plugin logs, so that the records of concurrent calls can be told apart (`call_id`).
private final class CallCounter: Sendable {
    private let value = Locked(0)

    func next() -> Int {
        value.withLock { value in
            value += 1
            return value
        }
    }
}

extension NetworkAgentPlugin where Self == LoggingPlugin {
    /// A plugin that logs requests, responses, failures and other plugins' events, secrets redacted.
    ///
    /// - Parameters:
    ///   - level: How much is logged; defaults to ``LogLevel/basic``.
    ///   - redaction: What is hidden; defaults to ``RedactionPolicy/init()``.
    ///   - bodyLimit: The most bytes of body text printed per body; defaults to ``LoggingPlugin/defaultBodyLimit``.
    ///   - prettyPrintsJSON: Whether JSON bodies are pretty-printed; defaults to `false`.
    ///   - logsCURLCommands: Whether each request is also logged as a cURL command; defaults to `false`.
    ///   - sink: Where records go; defaults to ``LogSink/standardError``.
    /// - Returns: A ``LoggingPlugin``.
    public static func logging(
        _ level: LogLevel = .basic,
        redaction: RedactionPolicy = RedactionPolicy(),
        bodyLimit: Int = LoggingPlugin.defaultBodyLimit,
        prettyPrintsJSON: Bool = false,
        logsCURLCommands: Bool = false,
        sink: LogSink = .standardError
    ) -> LoggingPlugin {
        LoggingPlugin(
            level: level,
            redaction: redaction,
            bodyLimit: bodyLimit,
            prettyPrintsJSON: prettyPrintsJSON,
            logsCURLCommands: logsCURLCommands,
            sink: sink
        )
    }
}
