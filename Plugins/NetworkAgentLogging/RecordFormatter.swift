import Foundation
import NetworkAgent

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Builds the records of one logged exchange.
///
/// At ``LogLevel/basic`` the request, response and event records are made without their text: each keeps the few
/// facts it shows (``LoggedCall`` and its own) and formats its message and metadata when a sink reads them
/// (``LogRecord/Deferred``), so that a sink that keeps records without reading them (or reads only some) does not pay
/// for the text of the others. What a record reads is what the eager record held.
struct RecordFormatter: Sendable {
    let level: LogLevel
    let request: URLRequest
    let renderer: BodyRenderer
    /// What every record of the exchange shows of the call: its number, method and redacted URL.
    let call: LoggedCall

    init(level: LogLevel, callID: Int, request: URLRequest, renderer: BodyRenderer) {
        self.level = level
        self.request = request
        self.renderer = renderer
        self.call = LoggedCall(id: callID, request: request, policy: renderer.policy)
    }

    var callID: Int { call.id }
    /// The request's URL as shown, redacted once for every record of the exchange.
    var url: String { call.url }
    private var policy: RedactionPolicy { renderer.policy }
    private var method: String { call.method }

    /// The URL of a response as shown: the request's, already redacted, unless the response came from elsewhere.
    func shownURL(of response: URLResponse?) -> String {
        call.shownURL(of: response?.url)
    }

    private var baseMetadata: [String: String] { call.metadata(extra: 0) }

    /// The call's metadata (`call_id`, `method`, `url`), with room for `extra` more entries.
    private func metadata(extra: Int) -> [String: String] {
        call.metadata(extra: extra)
    }

    /// `--> GET url`, with headers and body at higher levels.
    func requestRecord() -> LogRecord {
        let body = request.httpBody ?? Data()
        let streamed = request.httpBodyStream != nil
        guard level >= .headers else {
            return LogRecord(
                severity: .info,
                kind: .request,
                deferred: .request(call, bodyBytes: streamed ? nil : body.count)
            )
        }
        var metadata = metadata(extra: 1)
        if !streamed { metadata["request_bytes"] = String(body.count) }
        let size = streamed ? "streamed body" : "\(body.count)-byte body"
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
        guard level >= .headers else {
            return LogRecord(
                severity: .info,
                kind: .response,
                deferred: .response(
                    call,
                    status: http?.statusCode,
                    url: response.url,
                    duration: duration,
                    bodyBytes: data.count
                )
            )
        }
        let status = http.map { String($0.statusCode) } ?? "non-HTTP response"
        let responseURL = shownURL(of: response)
        let milliseconds = Self.milliseconds(duration)
        var metadata = metadata(extra: 4)
        metadata["url"] = responseURL
        metadata["status"] = http.map { String($0.statusCode) }
        metadata["duration_ms"] = milliseconds
        metadata["response_bytes"] = String(data.count)
        let head = "<-- \(status) \(method) \(responseURL) (\(milliseconds) ms"
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

    /// `--- retry.retry_scheduled attempt=1 delay_ms=200`, the same at every level; its text is made when read.
    func eventRecord(_ event: NetworkAgentEvent) -> LogRecord {
        LogRecord(severity: .debug, kind: .event, deferred: .event(call, event))
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
