extension RedisStore {
    /// The one error type of NetworkAgentRedisCache.
    ///
    /// Configuration errors reach a caller from creating a ``RedisStore`` (``Code/invalidURL``,
    /// ``Code/tlsUnsupported``), and ``Code/shutDown`` from a store's throwing methods after
    /// ``RedisStore/shutdown()``. Failures while serving requests never do: the cache misses and reports a
    /// `cache.error` event whose `reason` is a `DiskCachePlugin.Error` code. Compare ``code`` with the static codes;
    /// new codes may be added.
    public struct Error: Swift.Error, Sendable, CustomStringConvertible {
        /// What kind of failure this is.
        public struct Code: Hashable, Sendable, CustomStringConvertible {
            private enum Base: String, Sendable {
                case invalidURL, tlsUnsupported, connectionFailed, commandFailed, shutDown
            }
            private let base: Base

            /// The connection URL is not `redis://[[user]:password@]host[:port][/db]`.
            public static let invalidURL = Code(base: .invalidURL)
            /// The URL asks for TLS (`rediss://`), which the hiredis this product builds on does not offer (Debian's
            /// hiredis 0.14 has no TLS; hiredis gained it in 1.0 as a separate library).
            public static let tlsUnsupported = Code(base: .tlsUnsupported)
            /// The server could not be reached or refused the connection's setup (`AUTH`, `SELECT`).
            public static let connectionFailed = Code(base: .connectionFailed)
            /// A command failed: an I/O error or timeout, or an error reply.
            public static let commandFailed = Code(base: .commandFailed)
            /// The store was shut down (``RedisStore/shutdown()``, or dropped): it sends nothing more.
            public static let shutDown = Code(base: .shutDown)

            /// A short, stable name safe as a metrics label, e.g. `tls_unsupported`.
            public var description: String {
                switch base {
                case .invalidURL: "invalid_url"
                case .tlsUnsupported: "tls_unsupported"
                case .connectionFailed: "connection_failed"
                case .commandFailed: "command_failed"
                case .shutDown: "shut_down"
                }
            }
        }

        /// What kind of failure this is.
        public let code: Code
        /// A human-readable explanation; never contains the password.
        public let message: String

        /// Creates an error.
        ///
        /// - Parameters:
        ///   - code: What kind of failure this is.
        ///   - message: A human-readable explanation.
        public init(_ code: Code, _ message: String) {
            self.code = code
            self.message = message
        }

        /// `RedisStore.Error(code): message`.
        public var description: String {
            "RedisStore.Error(\(code)): \(message)"
        }
    }
}
