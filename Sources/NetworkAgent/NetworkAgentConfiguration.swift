import Foundation

/// Settings a ``NetworkAgent`` applies to every request it builds or sends.
public struct NetworkAgentConfiguration: Sendable {
    /// The library's version, as sent in the default `User-Agent`.
    public static let libraryVersion = "0.1.0"

    /// The default deadline of a whole request, redirects included: 60 seconds.
    public static let defaultTimeout: Duration = .seconds(60)

    /// The default size above which a multipart body is written to a temporary file: 8 MiB.
    public static let defaultMultipartMemoryThreshold = 8 << 20

    /// The deadline of a whole request unless its endpoint says otherwise. Sub-second values work.
    public var timeout: Duration
    /// The `User-Agent` set on requests that have none: `NetworkAgent/<version>` plus the `appToken` given to
    /// ``init(timeout:appToken:userAgent:multipartMemoryThreshold:temporaryDirectory:)``.
    public var userAgent: String
    /// Multipart bodies larger than this many bytes are streamed from a temporary file, not held in memory.
    public var multipartMemoryThreshold: Int
    /// Where temporary multipart bodies are written. Defaults to the system's temporary directory.
    public var temporaryDirectory: URL

    /// Creates a configuration.
    ///
    /// - Parameters:
    ///   - timeout: The deadline of a whole request. Defaults to ``defaultTimeout``.
    ///   - appToken: The app's own product token, e.g. `"Pokedex/1.0"`, appended to `NetworkAgent/<version>`
    ///     in the `User-Agent`. Defaults to the process name.
    ///   - userAgent: A complete `User-Agent` that replaces the default one.
    ///   - multipartMemoryThreshold: See ``multipartMemoryThreshold``.
    ///   - temporaryDirectory: See ``temporaryDirectory``.
    public init(
        timeout: Duration = defaultTimeout,
        appToken: String? = nil,
        userAgent: String? = nil,
        multipartMemoryThreshold: Int = defaultMultipartMemoryThreshold,
        temporaryDirectory: URL = FileManager.default.temporaryDirectory
    ) {
        self.timeout = timeout
        let token = appToken ?? Self.productToken(ProcessInfo.processInfo.processName)
        self.userAgent =
            userAgent ?? ["NetworkAgent/\(Self.libraryVersion)", token].filter { !$0.isEmpty }.joined(separator: " ")
        self.multipartMemoryThreshold = multipartMemoryThreshold
        self.temporaryDirectory = temporaryDirectory
    }

    /// A process name reduced to an RFC 9110 token.
    private static func productToken(_ name: String) -> String {
        String(name.unicodeScalars.filter { HTTPHeaderValidator.isTokenCharacter($0) }.map(Character.init))
    }
}
