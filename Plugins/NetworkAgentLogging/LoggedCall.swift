import Foundation
import NetworkAgent

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What every record of one logged exchange shows of its call: the call's number, the method and the redacted URL,
/// worked out once per exchange, and the policy that redacts what the records add.
///
/// Small on purpose: a record whose text is made when read (``LogRecord/Deferred``) keeps this, not the request (whose
/// body may be large) or the formatter.
struct LoggedCall: Sendable {
    /// The call's number (`call_id`).
    let id: Int
    /// The request's method, `GET` when it has none.
    let method: String
    /// The request's URL as shown, redacted.
    let url: String
    /// The request's URL as it is, to tell whether a response came from elsewhere.
    let requestURLText: String?
    let policy: RedactionPolicy

    init(id: Int, request: URLRequest, policy: RedactionPolicy) {
        self.id = id
        self.method = request.httpMethod ?? "GET"
        self.url = policy.redactedString(for: request.url)
        self.requestURLText = request.url?.absoluteString
        self.policy = policy
    }

    /// The URL of a response as shown: the request's, already redacted, unless the response came from elsewhere.
    func shownURL(of responseURL: URL?) -> String {
        guard let responseURL, responseURL.absoluteString != requestURLText else { return url }
        return policy.redactedString(for: responseURL)
    }

    /// The call's metadata (`call_id`, `method`, `url`), with room for `extra` more entries (so that adding them
    /// does not grow the dictionary again).
    func metadata(extra: Int) -> [String: String] {
        var metadata = [String: String](minimumCapacity: 3 + extra)
        metadata["call_id"] = String(id)
        metadata["method"] = method
        metadata["url"] = url
        return metadata
    }
}

extension LogRecord {
    /// The facts of a ``LogLevel/basic`` request or response record, or of an event record, from which its message
    /// and metadata are made each time they are read: the same text as the record built at once would hold.
    enum Deferred: Sendable {
        /// `--> GET url (5-byte body)`; `bodyBytes` is `nil` for a streamed body.
        case request(LoggedCall, bodyBytes: Int?)
        /// `<-- 200 GET url (12.3 ms, 512-byte body)`; `status` is `nil` for a response that is not HTTP.
        case response(LoggedCall, status: Int?, url: URL?, duration: Duration, bodyBytes: Int)
        /// `--- retry.retry_scheduled attempt=1 delay_ms=200`.
        case event(LoggedCall, NetworkAgentEvent)

        var message: String {
            switch self {
            case .request(let call, let bodyBytes):
                let note: String
                switch bodyBytes {
                case nil: note = " (streamed body)"
                case 0?: note = ""
                case let count?: note = " (\(count)-byte body)"
                }
                return "--> \(call.method) \(call.url)\(note)"
            case .response(let call, let status, let url, let duration, let bodyBytes):
                let shownStatus = status.map { String($0) } ?? "non-HTTP response"
                let milliseconds = RecordFormatter.milliseconds(duration)
                return "<-- \(shownStatus) \(call.method) \(call.shownURL(of: url)) (\(milliseconds) ms, "
                    + "\(bodyBytes)-byte body)"
            case .event(let call, let event):
                // Read once: the transport's time-to-headers event formats its attributes on each read.
                let attributes = event.attributes
                var shown = event
                shown.attributes = attributes
                for (key, value) in attributes {
                    let safe = call.policy.redactedAttribute(key: key, value: value)
                    // Most values are shown as they are: the attributes are copied only for one that is not.
                    if safe != value { shown.attributes[key] = safe }
                }
                return "--- " + shown.description
            }
        }

        var metadata: [String: String] {
            switch self {
            case .request(let call, let bodyBytes):
                var metadata = call.metadata(extra: 1)
                if let bodyBytes { metadata["request_bytes"] = String(bodyBytes) }
                return metadata
            case .response(let call, let status, let url, let duration, let bodyBytes):
                var metadata = call.metadata(extra: 4)
                metadata["url"] = call.shownURL(of: url)
                metadata["status"] = status.map { String($0) }
                metadata["duration_ms"] = RecordFormatter.milliseconds(duration)
                metadata["response_bytes"] = String(bodyBytes)
                return metadata
            case .event(let call, let event):
                let attributes = event.attributes
                var metadata = call.metadata(extra: 1 + attributes.count)
                metadata["event"] = event.source + "." + event.name
                for (key, value) in attributes {
                    metadata["event." + key] = call.policy.redactedAttribute(key: key, value: value)
                }
                return metadata
            }
        }
    }
}
