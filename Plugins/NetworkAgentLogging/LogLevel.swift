/// How much a ``LoggingPlugin`` writes about each call, from nothing to whole bodies.
///
/// Each level includes everything of the levels before it.
public enum LogLevel: Int, Sendable, Hashable, Comparable, CaseIterable, CustomStringConvertible {
    /// Nothing is logged; the plugin only passes the call on.
    case none
    /// One line per event: the request's method and URL; the response's status, duration and size; failures;
    /// and the events other plugins emit during the exchange (retries, cache answers, refreshes).
    case basic
    /// ``basic`` plus the request and response headers, as multi-line blocks.
    case headers
    /// ``headers`` plus the bodies, capped in size; binary bodies are summarised.
    case body

    /// Orders levels from ``none`` to ``body``.
    ///
    /// - Parameters:
    ///   - lhs: A level.
    ///   - rhs: Another level.
    /// - Returns: Whether `lhs` logs less than `rhs`.
    public static func < (lhs: LogLevel, rhs: LogLevel) -> Bool {
        lhs.rawValue < rhs.rawValue
    }

    /// The level's name: `none`, `basic`, `headers` or `body`.
    public var description: String {
        switch self {
        case .none: "none"
        case .basic: "basic"
        case .headers: "headers"
        case .body: "body"
        }
    }
}
