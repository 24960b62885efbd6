import Foundation
import NetworkAgent

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The transport this test process runs its over-the-wire tests on, chosen once for the whole process by the
/// `NETWORKAGENT_TEST_TRANSPORT` environment variable (`urlsession`, the default, or `curl`).
///
/// `Scripts/test` and `Scripts/sanitize` run the suites once per transport. A test that checks what every transport
/// must do (redirects, deadlines, faults, streaming, the plugins over the wire) takes its transport from here; a
/// test about one transport's own workarounds names that transport and says so.
///
/// ```swift
/// let agent = NetworkAgent(transport: TestTransport.make())
/// ```
public enum TestTransport {
    /// A transport the suites can run on.
    public enum Kind: String, CaseIterable, Sendable {
        /// `URLSessionTransport`, the core's default.
        case urlSession = "urlsession"
        /// `CurlTransport`, from the `NetworkAgentCurl` product.
        case curl

        /// Reads the value of `NETWORKAGENT_TEST_TRANSPORT`: unset or empty means ``urlSession``; anything but a
        /// kind's raw value is an error, never a silent fallback.
        ///
        /// - Parameter value: The variable's value, or `nil` when it is not set.
        /// - Throws: ``UnknownKind`` for a value that names no transport.
        public init(environmentValue value: String?) throws(UnknownKind) {
            guard let value, !value.isEmpty else {
                self = .urlSession
                return
            }
            guard let kind = Kind(rawValue: value) else { throw UnknownKind(value: value) }
            self = kind
        }
    }

    /// `NETWORKAGENT_TEST_TRANSPORT` names no transport.
    public struct UnknownKind: Error, Equatable, CustomStringConvertible {
        /// The value found.
        public let value: String

        /// Creates the error.
        ///
        /// - Parameter value: The value found.
        public init(value: String) { self.value = value }

        /// Names the value and the ones accepted.
        public var description: String {
            let accepted = Kind.allCases.map(\.rawValue).joined(separator: ", ")
            return "\(TestTransport.environmentVariable)=\(value) names no transport (accepted: \(accepted), or unset)"
        }
    }

    /// The environment variable that chooses the transport.
    public static let environmentVariable = "NETWORKAGENT_TEST_TRANSPORT"

    /// The transport of this process, read once from the environment.
    ///
    /// An unknown value stops the process with a message naming it: a run meant for one transport must never
    /// quietly test another. (The variable is set by whoever runs the tests, never by a caller or a server.)
    public static let kind: Kind = {
        do {
            return try Kind(environmentValue: ProcessInfo.processInfo.environment[environmentVariable])
        } catch {
            fatalError("\(error)")
        }
    }()

    /// One transport of ``kind`` for the whole process, with the default settings: what `NetworkAgent()` would be if
    /// this transport were the default.
    public static let shared: any HTTPTransport = make()

    /// An agent on ``shared``.
    ///
    /// - Parameter configuration: The agent's configuration.
    /// - Returns: `NetworkAgent(transport: TestTransport.shared, configuration: configuration)`.
    public static func agent(configuration: NetworkAgentConfiguration = NetworkAgentConfiguration()) -> NetworkAgent {
        NetworkAgent(transport: shared, configuration: configuration)
    }

    /// A new transport of ``kind``, with its own connections.
    ///
    /// - Parameters:
    ///   - maximumRedirects: The most redirects followed for one request; `0` returns 3xx responses to the caller.
    ///   - streamBufferLimit: The most bytes of a streamed body that wait unread: past it `URLSessionTransport`
    ///     fails the stream with `streamOverflow` and `CurlTransport` pauses the transfer. `nil` for the transport's
    ///     default.
    ///   - maximumConnectionsPerHost: The most connections to one host at once, `nil` for the transport's default
    ///     (URLSession's is a handful, `CurlTransport`'s 64).
    /// - Returns: The transport.
    public static func make(
        maximumRedirects: Int = URLSessionTransport.defaultMaximumRedirects,
        streamBufferLimit: Int? = nil,
        maximumConnectionsPerHost: Int? = nil
    ) -> any HTTPTransport {
        switch kind {
        case .urlSession:
            let configuration = URLSessionTransport.defaultSessionConfiguration()
            if let maximumConnectionsPerHost { configuration.httpMaximumConnectionsPerHost = maximumConnectionsPerHost }
            return URLSessionTransport(
                configuration: configuration,
                maximumRedirects: maximumRedirects,
                streamBufferLimit: streamBufferLimit ?? URLSessionTransport.defaultStreamBufferLimit
            )
        case .curl:
            return makeCurl(
                maximumRedirects: maximumRedirects,
                streamBufferLimit: streamBufferLimit,
                maximumConnectionsPerHost: maximumConnectionsPerHost
            )
        }
    }

    /// The transfers a transport of this package has started and not yet finished, or `nil` for a transport that
    /// does not count them.
    ///
    /// - Parameter transport: A transport made by ``make(maximumRedirects:streamBufferLimit:maximumConnectionsPerHost:)``
    ///   or any other.
    /// - Returns: The count, or `nil`.
    public static func activeTransfers(of transport: any HTTPTransport) -> Int? {
        if let transport = transport as? URLSessionTransport { return transport.activeTaskCount }
        return curlActiveTransfers(of: transport)
    }
}
