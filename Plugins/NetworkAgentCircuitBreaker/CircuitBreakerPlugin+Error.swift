public import Foundation

extension CircuitBreakerPlugin {
    /// Why a call was not let through: the circuit of its key is open, or half-open with every probe already in
    /// flight.
    ///
    /// The plugin throws a ``/NetworkAgent/NetworkAgentError`` with code
    /// ``/NetworkAgent/NetworkAgentError/Code/circuitOpen`` (so callers, the retry plugin and caches handle one error
    /// type) whose `underlying` error is this one; read it with `NetworkAgentError.circuitBreakerError`.
    /// Compare ``code`` with ``Code/open``; new codes may be added.
    public struct Error: Swift.Error, Sendable, CustomStringConvertible {
        /// What kind of failure this is.
        public struct Code: Hashable, Sendable, CustomStringConvertible {
            private enum Base: String, Sendable {
                case open
            }
            private let base: Base

            /// The circuit is open (or half-open with its probes in flight): the call failed fast, unsent.
            public static let open = Code(base: .open)

            /// A short, stable name safe as a metrics label: `circuit_open`.
            public var description: String {
                switch base {
                case .open: "circuit_open"
                }
            }
        }

        /// What kind of failure this is.
        public let code: Code
        /// A human-readable explanation: the key and until when the circuit stays open.
        public let message: String
        /// The circuit's key, e.g. `https://api.example.com:443`.
        public let key: String
        /// How long the circuit stays open from the moment the call was refused; `nil` when it is half-open with its
        /// probes in flight (it may close as soon as they succeed).
        public let retryAfter: Duration?
        /// The wall-clock date the circuit lets a probe through, by the plugin's `now`; `nil` when half-open.
        public let openUntil: Date?

        /// Creates an error.
        ///
        /// - Parameters:
        ///   - code: What kind of failure this is.
        ///   - message: A human-readable explanation.
        ///   - key: The circuit's key.
        ///   - retryAfter: How long the circuit stays open, if known.
        ///   - openUntil: When the circuit lets a probe through, if known.
        public init(_ code: Code, _ message: String, key: String, retryAfter: Duration? = nil, openUntil: Date? = nil) {
            self.code = code
            self.message = message
            self.key = key
            self.retryAfter = retryAfter
            self.openUntil = openUntil
        }

        /// `CircuitBreakerPlugin.Error(code): message`.
        public var description: String {
            "CircuitBreakerPlugin.Error(\(code)): \(message)"
        }
    }
}
