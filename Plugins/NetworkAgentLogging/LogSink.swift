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

    /// Creates a sink from a closure.
    ///
    /// - Parameter write: Receives every record; must be thread-safe and must not block for long.
    public init(_ write: @escaping @Sendable (LogRecord) -> Void) {
        self.write = write
    }

    /// Hands a record to the sink.
    ///
    /// - Parameter record: The record.
    public func callAsFunction(_ record: LogRecord) {
        write(record)
    }

    /// Writes each record's message and a newline to the process's standard error, one write per record, so that
    /// the lines of one record stay together when calls run concurrently.
    public static let standardError = LogSink { record in
        FileHandle.standardError.write(Data((record.message + "\n").utf8))
    }
}
