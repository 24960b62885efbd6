import Foundation

/// One event of a `text/event-stream` body (the WHATWG HTML standard's server-sent events).
public struct ServerSentEvent: Sendable, Hashable {
    /// The event type: the `event` field, or `message` when there was none.
    public var event: String
    /// The `data` fields joined with line feeds.
    public var data: String
    /// The last event ID seen so far in the stream (`id` fields persist across events), if any.
    public var id: String?
    /// The reconnection time the server asked for in this event's `retry` field, if any.
    public var retry: Duration?

    /// Creates an event.
    ///
    /// - Parameters:
    ///   - event: The event type.
    ///   - data: The data.
    ///   - id: The last event ID.
    ///   - retry: The reconnection time.
    package init(event: String = "message", data: String, id: String? = nil, retry: Duration? = nil) {
        self.event = event
        self.data = data
        self.id = id
        self.retry = retry
    }
}

/// Turns lines of an event stream into events, following the standard's interpretation rules.
struct ServerSentEventParser: LineDecoder {
    private var eventType = ""
    private var data = ""
    private var hasData = false
    private var lastEventID: String?
    private var retry: Duration?
    private var isFirstLine = true

    /// Processes one line; returns an event when the line (a blank one) dispatches it.
    mutating func process(_ rawLine: String) -> ServerSentEvent? {
        var line = Substring(rawLine)
        if isFirstLine {
            isFirstLine = false
            if line.first == "\u{FEFF}" { line = line.dropFirst() }
        }
        if line.isEmpty { return dispatch() }
        if line.first == ":" { return nil }
        let field: Substring
        var value: Substring
        if let colon = line.firstIndex(of: ":") {
            field = line[..<colon]
            value = line[line.index(after: colon)...]
            if value.first == " " { value = value.dropFirst() }
        } else {
            field = line
            value = ""
        }
        switch field {
        case "event":
            eventType = String(value)
        case "data":
            data += value
            data += "\n"
            hasData = true
        case "id" where !value.contains("\0"):
            lastEventID = String(value)
        case "retry" where !value.isEmpty && value.allSatisfy({ $0.isASCII && $0.isNumber }):
            if let milliseconds = Int64(value) { retry = .milliseconds(milliseconds) }
        default:
            break
        }
        return nil
    }

    mutating func decode(_ line: String) -> ServerSentEvent? {
        process(line)
    }

    private mutating func dispatch() -> ServerSentEvent? {
        defer {
            eventType = ""
            data = ""
            hasData = false
            retry = nil
        }
        guard hasData else { return nil }
        if data.hasSuffix("\n") { data.removeLast() }
        return ServerSentEvent(
            event: eventType.isEmpty ? "message" : eventType,
            data: data,
            id: lastEventID,
            retry: retry
        )
    }
}

extension HTTPBodySequence where Element == Data {
    /// The body as server-sent events (`text/event-stream`), dispatched at each blank line.
    ///
    /// Comments are skipped, `data` fields are joined with line feeds, `id` persists across events, and an event
    /// left unfinished when the body ends is discarded, as the standard says.
    ///
    /// - Returns: The events, as they are dispatched.
    public func serverSentEvents() -> HTTPBodySequence<ServerSentEvent> {
        HTTPBodySequence<ServerSentEvent>(lifetime: lifetime, decoder: LinesDecoder(ServerSentEventParser()))
    }
}
