#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A socket call failed while a ``LoopbackServer`` was being set up (for example, the port was taken).
public struct LoopbackServerError: Error, Sendable, CustomStringConvertible {
    /// The operation that failed, e.g. `bind 127.0.0.1:8080`.
    public let operation: String
    /// The `errno` value, or 0 when no system call failed.
    public let code: Int32
    /// The text of the error, e.g. `Address already in use`.
    public let message: String

    /// Creates an error for a failed operation.
    ///
    /// - Parameters:
    ///   - operation: What failed, e.g. `bind 127.0.0.1:8080`.
    ///   - code: The `errno` value, or 0 when no system call failed.
    ///   - message: The text of the error; defaults to the system's text for `code`.
    public init(operation: String, code: Int32, message: String? = nil) {
        self.operation = operation
        self.code = code
        self.message = message ?? String(cString: strerror(code))
    }

    /// `"<operation> failed: <message> (errno <code>)"`.
    public var description: String {
        "\(operation) failed: \(message) (errno \(code))"
    }
}
