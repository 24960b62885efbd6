import Foundation
import NetworkAgent

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Builds the records of one logged exchange.
struct RecordFormatter: Sendable {
    let level: LogLevel
    let callID: Int
    let request: URLRequest
    let renderer: BodyRenderer
    /// The request's URL as shown, redacted once for every record of the exchange.
    let url: String

    init(level: LogLevel, callID: Int, request: URLRequest, renderer: BodyRenderer) {
        self.level = level
        self.callID = callID
        self.request = request
        self.renderer = renderer
        self.url = renderer.policy.redactedString(for: request.url)
    }

    private var policy: RedactionPolicy { renderer.policy }
    private var method: String { request.httpMethod ?? "GET" }

    /// The URL of a response as shown: the request's, already redacted, unless the response came from elsewhere.
    func shownURL(of response: URLResponse?) -> String {
        guard let responseURL = response?.url, responseURL.absoluteString != request.url?.absoluteString else {
            return url
        }
        return policy.redactedString(for: responseURL)
    }

    private var baseMetadata: [String: String] { metadata(extra: 0) }

    /// The call's metadata (`call_id`, `method`, `url`), with room for `extra` more entries (so that adding them
    /// does not grow the dictionary again).
    private func metadata(extra: Int) -> [String: String] {
        var metadata = [String: String](minimumCapacity: 3 + extra)
        metadata["call_id"] = String(callID)
        metadata["method"] = method
        metadata["url"] = url
        return metadata
    }

    /// `--> GET url`, with headers and body at higher levels.
    func requestRecord() -> LogRecord {
        let body = request.httpBody ?? Data()
        let streamed = request.httpBodyStream != nil
        var metadata = metadata(extra: 1)
        if !streamed { metadata["request_bytes"] = String(body.count) }
        let size = streamed ? "streamed body" : "\(body.count)-byte body"
        guard level >= .headers else {
            let note = streamed || !body.isEmpty ? " (\(size))" : ""
            return LogRecord(
                severity: .info,
                kind: .request,
                message: "--> \(method) \(url)\(note)",
                metadata: metadata
            )
        }
        var lines = ["--> \(method) \(url)"]
        lines += policy.redactedHeaders(request.allHTTPHeaderFields ?? [:], sensitive: request.sensitiveHeaderNames)
            .map { "\($0.name): \($0.value)" }
        if level >= .body {
            if streamed {
                lines += ["", "(streamed body, not shown)"]
            } else if !body.isEmpty {
                lines += ["", renderer.printable(body, contentType: request.value(forHTTPHeaderField: "Content-Type"))]
            }
        }
        lines.append("--> END \(method) (\(size))")
        return LogRecord(
            severity: .info,
            kind: .request,
            message: lines.joined(separator: "\n"),
            metadata: metadata
        )
    }

    /// The request as a redacted cURL command.
    func curlRecord() -> LogRecord {
        LogRecord(
            severity: .info,
            kind: .curl,
            message: curlCommand(for: request, redaction: policy),
            metadata: baseMetadata
        )
    }

    /// `<-- 200 GET url (12.3 ms, 512-byte body)`, with headers and body at higher levels.
    func responseRecord(_ response: URLResponse, data: Data, duration: Duration) -> LogRecord {
        let http = response as? HTTPURLResponse
        let status = http.map { String($0.statusCode) } ?? "non-HTTP response"
        let responseURL = shownURL(of: response)
        let milliseconds = Self.milliseconds(duration)
        var metadata = metadata(extra: 4)
        metadata["url"] = responseURL
        metadata["status"] = http.map { String($0.statusCode) }
        metadata["duration_ms"] = milliseconds
        metadata["response_bytes"] = String(data.count)
        let head = "<-- \(status) \(method) \(responseURL) (\(milliseconds) ms"
        guard level >= .headers else {
            return LogRecord(
                severity: .info,
                kind: .response,
                message: head + ", \(data.count)-byte body)",
                metadata: metadata
            )
        }
        var lines = [head + ")"]
        lines += policy.redactedHeaders(Self.headerFields(of: http)).map { "\($0.name): \($0.value)" }
        if level >= .body, !data.isEmpty {
            lines += ["", renderer.printable(data, contentType: http?.value(forHTTPHeaderField: "Content-Type"))]
        }
        lines.append("<-- END HTTP (\(data.count)-byte body)")
        return LogRecord(
            severity: .info,
            kind: .response,
            message: lines.joined(separator: "\n"),
            metadata: metadata
        )
    }

    /// `<-- FAILED GET url (12.3 ms): timed_out: …`, the same at every level.
    func failureRecord(_ error: any Error, duration: Duration) -> LogRecord {
        let milliseconds = Self.milliseconds(duration)
        let description: String
        if let error = error as? NetworkAgentError {
            description = "\(error.code): \(error.message)"
        } else {
            description = String(describing: error)
        }
        // Error messages quote URLs (the request's, a redirect hop's, a proxy's): quote the redacted request URL, and
        // redact secret parameters and passwords wherever else they appear.
        let rawURL = request.url?.absoluteString ?? ""
        let quoted = rawURL.isEmpty ? description : description.replacingOccurrences(of: rawURL, with: url)
        let safe = policy.redactedText(quoted)
        var metadata = baseMetadata
        metadata["duration_ms"] = milliseconds
        metadata["error"] = (error as? NetworkAgentError)?.shortDescription ?? String(describing: type(of: error))
        return LogRecord(
            severity: .error,
            kind: .failure,
            message: "<-- FAILED \(method) \(url) (\(milliseconds) ms): \(safe)",
            metadata: metadata
        )
    }

    /// `--- retry.retry_scheduled attempt=1 delay_ms=200`, the same at every level.
    func eventRecord(_ event: NetworkAgentEvent) -> LogRecord {
        // Read once: the transport's time-to-headers event formats its attributes on each read.
        let attributes = event.attributes
        var shown = event
        shown.attributes = attributes
        var metadata = metadata(extra: 1 + attributes.count)
        metadata["event"] = event.source + "." + event.name
        for (key, value) in attributes {
            let safe = policy.redactedAttribute(key: key, value: value)
            // Most values are shown as they are: the event's attributes are copied only for one that is not.
            if safe != value { shown.attributes[key] = safe }
            metadata["event." + key] = safe
        }
        return LogRecord(severity: .debug, kind: .event, message: "--- " + shown.description, metadata: metadata)
    }

    /// Milliseconds with one decimal, e.g. `12.3`.
    static func milliseconds(_ duration: Duration) -> String {
        let value = duration.timeInterval * 1_000
        // `String(format: "%.1f")` (through Foundation, on every response record) only where rounding to tenths is
        // not plain: far from a tie, the double product rounds as the exact value does.
        let tenths = value * 10
        let rounded = tenths.rounded(.toNearestOrEven)
        guard value >= 0, tenths < 1e9, abs(abs(tenths - rounded) - 0.5) > 1e-6 else {
            return String(format: "%.1f", value)
        }
        let whole = Int(rounded)
        return String(whole / 10) + "." + String(whole % 10)
    }

    /// A response's header fields as strings (FoundationNetworking types them `[AnyHashable: Any]`).
    static func headerFields(of response: HTTPURLResponse?) -> [String: String] {
        var fields: [String: String] = [:]
        for (name, value) in response?.allHeaderFields ?? [:] {
            fields[String(describing: name)] = String(describing: value)
        }
        return fields
    }
}
