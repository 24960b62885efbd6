extension GzipPlugin {
    /// The one error type of NetworkAgentGzip, thrown by ``Deflater`` and ``Inflater`` and reported by the plugin.
    ///
    /// The error is opaque: inspect ``code`` to decide what happened and ``message`` for a human-readable
    /// detail. New codes may be added in later versions, so a `switch` over ``code`` needs a `default` case.
    ///
    /// ```swift
    /// do {
    ///     let body = try Inflater.decompress(payload)
    /// } catch where error.code == .outputLimitExceeded {
    ///     // The body would have decompressed past the configured limit.
    /// }
    /// ```
    public struct Error: Swift.Error, Sendable, Hashable, CustomStringConvertible {
        /// The kind of failure, compared with `==` or matched in a `switch` against the static constants.
        public struct Code: Sendable, Hashable, CustomStringConvertible {
            private enum Value: Sendable, Hashable {
                case corruptData
                case truncatedInput
                case checksumMismatch
                case outputLimitExceeded
                case ratioLimitExceeded
                case invalidArgument
                case zlibFailure
            }

            private let value: Value

            private init(_ value: Value) {
                self.value = value
            }

            /// The input is not a valid gzip, zlib or deflate stream (bad header, invalid block, trailing garbage).
            public static let corruptData = Code(.corruptData)

            /// The input ended before the compressed stream was complete.
            public static let truncatedInput = Code(.truncatedInput)

            /// The stream decoded, but its trailer disagrees with the output: the CRC-32 or the length (ISIZE) of a
            /// gzip member, or the Adler-32 of a zlib stream.
            public static let checksumMismatch = Code(.checksumMismatch)

            /// The decompressed output would have exceeded ``Inflater/Limits/maximumOutputBytes``.
            public static let outputLimitExceeded = Code(.outputLimitExceeded)

            /// The ratio of output to input bytes exceeded ``Inflater/Limits/maximumRatio``.
            public static let ratioLimitExceeded = Code(.ratioLimitExceeded)

            /// An argument was out of range, such as a compression level outside `0...9`.
            public static let invalidArgument = Code(.invalidArgument)

            /// zlib failed for a reason other than bad input, such as running out of memory; see ``GzipPlugin/Error/zlibStatus``.
            public static let zlibFailure = Code(.zlibFailure)

            /// A short, stable name for the code, such as `truncatedInput`.
            public var description: String {
                switch value {
                case .corruptData: "corruptData"
                case .truncatedInput: "truncatedInput"
                case .checksumMismatch: "checksumMismatch"
                case .outputLimitExceeded: "outputLimitExceeded"
                case .ratioLimitExceeded: "ratioLimitExceeded"
                case .invalidArgument: "invalidArgument"
                case .zlibFailure: "zlibFailure"
                }
            }
        }

        /// What kind of failure this is.
        public let code: Code

        /// A human-readable detail, often zlib's own message (for example `incorrect length check`).
        public let message: String

        /// The zlib return code (such as `Z_DATA_ERROR`, -3) when zlib reported the failure, otherwise `nil`.
        public let zlibStatus: Int?

        /// Creates an error; only this module creates them, which keeps the set of codes under its control.
        init(code: Code, message: String, zlibStatus: Int? = nil) {
            self.code = code
            self.message = message
            self.zlibStatus = zlibStatus
        }

        /// `GzipPlugin.Error(code): message`: the code, the message and, when present, the zlib return code, for logs.
        public var description: String {
            if let zlibStatus {
                return "GzipPlugin.Error(\(code)): \(message) (zlib status \(zlibStatus))"
            }
            return "GzipPlugin.Error(\(code)): \(message)"
        }
    }
}

/// The former name of ``GzipPlugin/Error``.
@available(*, deprecated, renamed: "GzipPlugin.Error")
public typealias GzipError = GzipPlugin.Error
