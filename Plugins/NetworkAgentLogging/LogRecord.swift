/// One entry written by a ``LoggingPlugin``: a request, a response, a failure or an event of another plugin.
///
/// The ``message`` is ready to print (one line at ``LogLevel/basic``, a block at higher levels); the ``metadata``
/// carries the same facts as separate, already redacted values for structured loggers.
public struct LogRecord: Sendable, Hashable, CustomStringConvertible {
    /// How serious a record is; map it to your logger's level (swift-log's `Logger.Level`, `OSLogType`).
    public enum Severity: Int, Sendable, Hashable, Comparable, CustomStringConvertible {
        /// Events of other plugins (a retry scheduled, a cache hit, a token refreshed).
        case debug
        /// Requests, responses and cURL commands.
        case info
        /// Failed exchanges: the transport or an inner plugin threw.
        case error

        /// Orders severities from ``debug`` to ``error``.
        ///
        /// - Parameters:
        ///   - lhs: A severity.
        ///   - rhs: Another severity.
        /// - Returns: Whether `lhs` is less serious than `rhs`.
        public static func < (lhs: Severity, rhs: Severity) -> Bool {
            lhs.rawValue < rhs.rawValue
        }

        /// `debug`, `info` or `error`.
        public var description: String {
            switch self {
            case .debug: "debug"
            case .info: "info"
            case .error: "error"
            }
        }
    }

    /// What a record describes.
    public enum Kind: String, Sendable, Hashable, CustomStringConvertible {
        /// A request handed to the network exchange.
        case request
        /// The response to it.
        case response
        /// The exchange threw instead of answering.
        case failure
        /// A ``/NetworkAgent/NetworkAgentEvent`` another plugin (or the transport) emitted during the exchange.
        case event
        /// A cURL command reproducing the request.
        case curl
        /// The body of a streamed response ended: the bytes handed to the caller and how it ended (`stream_end`).
        case streamEnd = "stream_end"

        /// The kind's raw name, e.g. `request`.
        public var description: String { rawValue }
    }

    /// How serious the record is.
    public var severity: Severity
    /// What the record describes.
    public var kind: Kind
    /// The text to print, already redacted.
    ///
    /// A record the ``LoggingPlugin`` made at ``LogLevel/basic`` (and every event record) formats its text when this
    /// is read, each time it is: a sink that drops records, or reads only some, does not pay for the text of the
    /// others. Keep the value when you need it more than once.
    public var message: String {
        get { givenMessage ?? deferred?.message ?? "" }
        set {
            givenMessage = newValue
            if givenMetadata != nil { deferred = nil }
        }
    }
    /// The record's facts as key/value pairs, already redacted. Keys used: `call_id`, `method`, `url`, `status`,
    /// `duration_ms`, `request_bytes`, `response_bytes`, `error`, `event`, `outcome` (of a ``Kind/streamEnd`` record:
    /// `completed`, `failed` or `cancelled`). Made when read, as ``message`` is.
    public var metadata: [String: String] {
        get { givenMetadata ?? deferred?.metadata ?? [:] }
        set {
            givenMetadata = newValue
            if givenMessage != nil { deferred = nil }
        }
    }

    /// The message given or set, if any; otherwise ``deferred`` makes it.
    private var givenMessage: String?
    /// The metadata given or set, if any; otherwise ``deferred`` makes it.
    private var givenMetadata: [String: String]?
    /// What the text not given is made from; `nil` once both are given.
    private var deferred: Deferred?

    /// Creates a record.
    ///
    /// - Parameters:
    ///   - severity: How serious the record is.
    ///   - kind: What the record describes.
    ///   - message: The text to print.
    ///   - metadata: The record's facts as key/value pairs.
    public init(severity: Severity, kind: Kind, message: String, metadata: [String: String] = [:]) {
        self.severity = severity
        self.kind = kind
        self.givenMessage = message
        self.givenMetadata = metadata
        self.deferred = nil
    }

    /// A record whose message and metadata are made from `deferred` when read.
    init(severity: Severity, kind: Kind, deferred: Deferred) {
        self.severity = severity
        self.kind = kind
        self.givenMessage = nil
        self.givenMetadata = nil
        self.deferred = deferred
    }

    /// Records are equal when their severities, kinds, messages and metadata are, however their text is held.
    ///
    /// - Parameters:
    ///   - lhs: A record.
    ///   - rhs: Another record.
    /// - Returns: Whether they are equal.
    public static func == (lhs: LogRecord, rhs: LogRecord) -> Bool {
        lhs.severity == rhs.severity && lhs.kind == rhs.kind && lhs.message == rhs.message
            && lhs.metadata == rhs.metadata
    }

    /// Hashes the severity, kind, message and metadata, in that order, however the text is held.
    ///
    /// - Parameter hasher: The hasher to feed.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(severity)
        hasher.combine(kind)
        hasher.combine(message)
        hasher.combine(metadata)
    }

    /// The ``message``.
    public var description: String { message }
}
