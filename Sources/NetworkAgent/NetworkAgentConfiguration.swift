import Foundation

/// Settings a ``NetworkAgent`` applies to every request it builds or sends.
public struct NetworkAgentConfiguration: Sendable {
    /// The library's version, as sent in the default `User-Agent`.
    public static let libraryVersion = "0.1.0"

    /// The default deadline of a whole request, redirects included: 60 seconds.
    public static let defaultTimeout: Duration = .seconds(60)

    /// The default size above which a multipart body is written to a temporary file: 8 MiB.
    public static let defaultMultipartMemoryThreshold = 8 << 20

    /// The default ``maximumResponseBytes``: 256 MiB.
    ///
    /// The same bound as the gzip plugin's own inflation limit, so that a compressed response decoded by libcurl on
    /// Linux (where that plugin cannot see the compressed bytes) is bounded as it would be elsewhere. Far above any
    /// API response held in memory; a download or a long-lived event stream that may exceed it sets its own limit
    /// (``NetworkAgentEndpoint/maximumResponseBytes``, `Int.max` for none).
    public static let defaultMaximumResponseBytes = 256 << 20

    /// The deadline of a whole request unless its endpoint says otherwise. Sub-second values work.
    public var timeout: Duration
    /// The `User-Agent` set on requests that have none: `NetworkAgent/<version>` plus the `appToken` given to
    /// ``init(timeout:appToken:userAgent:multipartMemoryThreshold:temporaryDirectory:maximumResponseBytes:)``.
    public var userAgent: String
    /// Multipart bodies larger than this many bytes are streamed from a temporary file, not held in memory.
    public var multipartMemoryThreshold: Int
    /// Where temporary multipart bodies are written. Defaults to the system's temporary directory.
    public var temporaryDirectory: URL
    /// Header fields whose values are secrets on every request of the agent (any case), e.g. `["X-Session"]`: the
    /// URL session transport removes them on a redirect to another origin or from `https` to `http`, and the logging
    /// plugin redacts them. Empty by default; see `URLRequest.sensitiveHeaderNames`.
    public var sensitiveHeaders: Set<String> = []
    /// The most bytes a response body may have unless its endpoint says otherwise; `nil` for no bound.
    ///
    /// Counted as the bytes arrive, after the transport's own content decoding (libcurl inflates gzip, deflate, br and
    /// zstd on Linux), for buffered and streamed responses alike, per response (each redirect hop and each retry
    /// starts from zero). ``URLSessionTransport`` stops the transfer the moment a body grows past it and the call
    /// fails with ``NetworkAgentError/Code/responseTooLarge``; a streamed body delivers what came before the limit,
    /// then fails with that error. With another transport the agent checks a buffered body once it has it. A body of
    /// exactly this many bytes passes; negative values count as 0.
    public var maximumResponseBytes: Int?

    /// Creates a configuration.
    ///
    /// - Parameters:
    ///   - timeout: The deadline of a whole request. Defaults to ``defaultTimeout``.
    ///   - appToken: The app's own product token, e.g. `"Pokedex/1.0"`, appended to `NetworkAgent/<version>`
    ///     in the `User-Agent`. Defaults to the process name.
    ///   - userAgent: A complete `User-Agent` that replaces the default one.
    ///   - multipartMemoryThreshold: See ``multipartMemoryThreshold``.
    ///   - temporaryDirectory: See ``temporaryDirectory``.
    ///   - maximumResponseBytes: See ``maximumResponseBytes``. Defaults to ``defaultMaximumResponseBytes``; `nil`
    ///     for no bound.
    public init(
        timeout: Duration = defaultTimeout,
        appToken: String? = nil,
        userAgent: String? = nil,
        multipartMemoryThreshold: Int = defaultMultipartMemoryThreshold,
        temporaryDirectory: URL = FileManager.default.temporaryDirectory,
        maximumResponseBytes: Int? = defaultMaximumResponseBytes
    ) {
        self.timeout = timeout
        let token = appToken ?? Self.productToken(ProcessInfo.processInfo.processName)
        self.userAgent =
            userAgent ?? ["NetworkAgent/\(Self.libraryVersion)", token].filter { !$0.isEmpty }.joined(separator: " ")
        self.multipartMemoryThreshold = multipartMemoryThreshold
        self.temporaryDirectory = temporaryDirectory
        self.maximumResponseBytes = maximumResponseBytes
    }

    /// A process name reduced to an RFC 9110 token.
    private static func productToken(_ name: String) -> String {
        String(name.unicodeScalars.filter { HTTPHeaderValidator.isTokenCharacter($0) }.map(Character.init))
    }
}
