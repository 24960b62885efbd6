import Foundation
import NetworkAgent

/// Where a ``LoggingPlugin`` writes its ``LogRecord``s: standard error by default, or any closure.
///
/// The closure is called synchronously on the task making the call, possibly from many tasks at once: keep it
/// short and thread-safe. Bridging to swift-log or `os.Logger` is a few lines (see `Docs/Logging.md`).
///
/// ```swift
/// let sink = LogSink { record in myLogger.info(record.message) }
/// ```
public struct LogSink: Sendable {
    private let write: @Sendable (LogRecord) -> Void
    /// The least serious record the sink keeps: a ``LoggingPlugin`` never builds records below it (nor listens to
    /// other plugins' events when ``LogRecord/Severity/debug`` is below it), so that what a sink would drop costs
    /// nothing. ``LogRecord/Severity/debug`` (every record) unless the sink was made with a minimum.
    public let minimumSeverity: LogRecord.Severity

    /// Creates a sink from a closure.
    ///
    /// - Parameter write: Receives every record; must be thread-safe and must not block for long.
    public init(_ write: @escaping @Sendable (LogRecord) -> Void) {
        self.init(minimumSeverity: .debug, write)
    }

    /// Creates a sink that keeps only records of `minimumSeverity` or more serious, for a logger set to a level:
    /// the plugin does not build the others.
    ///
    /// ```swift
    /// let sink = LogSink(minimumSeverity: .info) { record in print(record.message) }  // no event records
    /// ```
    ///
    /// - Parameters:
    ///   - minimumSeverity: The least serious record handed to `write`.
    ///   - write: Receives the records kept; must be thread-safe and must not block for long.
    public init(minimumSeverity: LogRecord.Severity, _ write: @escaping @Sendable (LogRecord) -> Void) {
        self.minimumSeverity = minimumSeverity
        self.write = write
    }

    /// Whether the sink keeps records of `severity`.
    func keeps(_ severity: LogRecord.Severity) -> Bool {
        severity >= minimumSeverity
    }

    /// Hands a record to the sink.
    ///
    /// - Parameter record: The record.
    public func callAsFunction(_ record: LogRecord) {
        guard keeps(record.severity) else { return }
        write(record)
    }

    /// Writes each record's message and a newline to the process's standard error, one write per record, so that
    /// the lines of one record stay together when calls run concurrently.
    public static let standardError = LogSink { record in
        FileHandle.standardError.write(Data((record.message + "\n").utf8))
    }
}
