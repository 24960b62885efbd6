import Foundation
import NetworkAgent

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension RecordFormatter {
    private var shownMethod: String { request.httpMethod ?? "GET" }

    private func shownURL(_ response: URLResponse?) -> String {
        shownURL(of: response)
    }

    /// `<-- 200 GET url (12.3 ms, streamed body)`: the head of a streamed 2xx response, whose bytes go to the caller
    /// and are counted in the ``streamEndRecord(_:response:duration:)`` when it ends.
    func streamHeadRecord(_ response: HTTPURLResponse, duration: Duration) -> LogRecord {
        let url = shownURL(response)
        let milliseconds = Self.milliseconds(duration)
        let metadata = [
            "call_id": String(callID), "method": shownMethod, "url": url, "status": String(response.statusCode),
            "duration_ms": milliseconds,
        ]
        let head = "<-- \(response.statusCode) \(shownMethod) \(url) (\(milliseconds) ms"
        guard level >= .headers else {
            return LogRecord(severity: .info, kind: .response, message: head + ", streamed body)", metadata: metadata)
        }
        var lines = [head + ")"]
        lines += renderer.policy.redactedHeaders(Self.headerFields(of: response)).map { "\($0.name): \($0.value)" }
        lines.append("<-- END HEADERS (streamed body, counted when the stream ends)")
        return LogRecord(
            severity: .info,
            kind: .response,
            message: lines.joined(separator: "\n"),
            metadata: metadata
        )
    }

    /// `<-- END STREAM 200 GET url (1234.5 ms, 5000-byte body, completed)`: how the body of a streamed response
    /// ended and how many bytes the caller was handed; an ``LogRecord/Severity/error`` when the transfer failed.
    func streamEndRecord(_ end: HTTPStreamEnd, response: HTTPURLResponse, duration: Duration) -> LogRecord {
        let url = shownURL(response)
        let milliseconds = Self.milliseconds(duration)
        var metadata = [
            "call_id": String(callID), "method": shownMethod, "url": url, "status": String(response.statusCode),
            "duration_ms": milliseconds, "response_bytes": String(end.bytes),
        ]
        let summary =
            "<-- END STREAM \(response.statusCode) \(shownMethod) \(url) (\(milliseconds) ms, "
            + "\(end.bytes)-byte body"
        switch end.outcome {
        case .completed:
            metadata["outcome"] = "completed"
            return LogRecord(severity: .info, kind: .streamEnd, message: summary + ", completed)", metadata: metadata)
        case .cancelled:
            metadata["outcome"] = "cancelled"
            return LogRecord(severity: .info, kind: .streamEnd, message: summary + ", cancelled)", metadata: metadata)
        case .failed(let error):
            metadata["outcome"] = "failed"
            metadata["error"] = error.shortDescription
            // Error messages may quote the URL: quote the redacted one instead.
            var description = "\(error.code): \(error.message)"
            for target in [request.url, response.url].compactMap({ $0 }) where !target.absoluteString.isEmpty {
                description = description.replacingOccurrences(
                    of: target.absoluteString,
                    with: renderer.policy.redactedString(for: target)
                )
            }
            description = renderer.policy.redactedText(description)
            return LogRecord(
                severity: .error,
                kind: .streamEnd,
                message: summary + ", failed): \(description)",
                metadata: metadata
            )
        }
    }
}
