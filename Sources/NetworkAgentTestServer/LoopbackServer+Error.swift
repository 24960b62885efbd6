#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension LoopbackServer {
    /// The one error type of NetworkAgentTestServer: a ``LoopbackServer`` could not be set up (for example, the port
    /// was taken).
    ///
    /// Compare ``code`` with the static codes; new codes may be added.
    public struct Error: Swift.Error, Sendable, CustomStringConvertible {
        /// What kind of failure this is.
        public struct Code: Hashable, Sendable, CustomStringConvertible {
            private let name: String

            /// A socket, pipe or file-descriptor call failed; ``LoopbackServer/Error/systemErrorNumber`` says why.
            public static let systemCallFailed = Code(name: "system_call_failed")
            /// An argument was out of range, such as a port above 65535.
            public static let invalidArgument = Code(name: "invalid_argument")

            /// A short, stable name safe as a metrics label, e.g. `system_call_failed`.
            public var description: String { name }
        }

        /// What kind of failure this is.
        public let code: Code
        /// The text of the error, e.g. `Address already in use`.
        public let message: String
        /// The operation that failed, e.g. `bind 127.0.0.1:8080`.
        public let operation: String
        /// The `errno` of the failed system call, where there was one.
        public let systemErrorNumber: Int32?

        /// Creates an error.
        ///
        /// - Parameters:
        ///   - code: What kind of failure this is.
        ///   - message: The text of the error.
        ///   - operation: What failed, e.g. `bind 127.0.0.1:8080`.
        ///   - systemErrorNumber: The `errno` of the failed system call, if any.
        public init(_ code: Code, _ message: String, operation: String, systemErrorNumber: Int32? = nil) {
            self.code = code
            self.message = message
            self.operation = operation
            self.systemErrorNumber = systemErrorNumber
        }

        /// An error for a system call that failed with `errorNumber`, with the system's text for it as the message.
        static func systemCall(_ operation: String, errorNumber: Int32) -> Error {
            Error(
                .systemCallFailed,
                String(cString: strerror(errorNumber)),
                operation: operation,
                systemErrorNumber: errorNumber
            )
        }

        /// `LoopbackServer.Error(code): <operation> failed: <message>`, with the `errno` where there is one.
        public var description: String {
            var text = "LoopbackServer.Error(\(code)): \(operation) failed: \(message)"
            if let systemErrorNumber { text += " (errno \(systemErrorNumber))" }
            return text
        }
    }
}

/// The former name of ``LoopbackServer/Error``.
@available(*, deprecated, renamed: "LoopbackServer.Error")
public typealias LoopbackServerError = LoopbackServer.Error
