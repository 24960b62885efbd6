extension DiskCachePlugin {
    /// The one error type of NetworkAgentDiskCache.
    ///
    /// Only ``Code/directoryLocked`` ever reaches a caller, from creating a ``DiskStore``: every other failure degrades
    /// the request it happens in to a cache miss and is reported as a `cache.error` ``/NetworkAgent/NetworkAgentEvent``
    /// whose `reason` is the code's description. Compare ``code`` with the static codes; new codes may be added.
    public struct Error: Swift.Error, Sendable, CustomStringConvertible {
        /// What kind of failure this is.
        public struct Code: Hashable, Sendable, CustomStringConvertible {
            private enum Base: String, Sendable {
                case directoryLocked, unavailable, io, corruptEntry
            }
            private let base: Base

            /// Another process holds the directory's lock file, or a ``DiskStore`` created directly in this one does.
            /// (Plugins created on one directory in one process share its store instead.)
            public static let directoryLocked = Code(base: .directoryLocked)
            /// The store could not set up its directory (not creatable, not writable, no lock file); it answers every
            /// lookup with nothing and refuses every write.
            public static let unavailable = Code(base: .unavailable)
            /// Reading or writing an entry failed: a full disk, a missing or read-only directory, an I/O error.
            public static let io = Code(base: .io)
            /// A stored entry failed its checksum or length check; it has been deleted.
            public static let corruptEntry = Code(base: .corruptEntry)

            /// A short, stable name safe as a metrics label, e.g. `corrupt_entry`.
            public var description: String {
                switch base {
                case .directoryLocked: "directory_locked"
                case .unavailable: "unavailable"
                case .io: "io"
                case .corruptEntry: "corrupt_entry"
                }
            }
        }

        /// What kind of failure this is.
        public let code: Code
        /// A human-readable explanation; names paths, never header values.
        public let message: String
        /// The `errno` of the failed system call, where there was one.
        public let systemErrorNumber: Int32?

        /// Creates an error.
        ///
        /// - Parameters:
        ///   - code: What kind of failure this is.
        ///   - message: A human-readable explanation.
        ///   - systemErrorNumber: The `errno` of the failed system call, if any.
        public init(_ code: Code, _ message: String, systemErrorNumber: Int32? = nil) {
            self.code = code
            self.message = message
            self.systemErrorNumber = systemErrorNumber
        }

        /// `DiskCachePlugin.Error(code): message`.
        public var description: String {
            "DiskCachePlugin.Error(\(code)): \(message)"
        }
    }
}

/// The former name of ``DiskCachePlugin/Error``.
@available(*, deprecated, renamed: "DiskCachePlugin.Error")
public typealias DiskCacheError = DiskCachePlugin.Error
