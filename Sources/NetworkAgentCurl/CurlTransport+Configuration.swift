import Foundation
import NetworkAgent

extension CurlTransport {
    /// How a ``CurlTransport`` connects: connection limits, timeouts, TLS trust, proxy, cookies and redirects. Set
    /// once, when the transport is created.
    public struct Configuration: Sendable, Hashable {
        /// The HTTP version a transport asks for.
        public enum HTTPVersion: Sendable, Hashable {
            /// HTTP/1.1 only.
            case http1
            /// HTTP/2 over TLS when the server offers it through ALPN (multiplexing requests on one connection),
            /// HTTP/1.1 otherwise and for plain `http`. The default.
            case http2
        }

        /// Whether the transport keeps cookies.
        public enum Cookies: Sendable, Hashable {
            /// No cookie engine: `Set-Cookie` is ignored and only a request's own `Cookie` header is sent. The
            /// default.
            case none
            /// Cookies kept in memory for the transport's lifetime, shared by all its requests.
            case inMemory
        }

        /// The default most connections to one host: 64.
        public static let defaultMaximumConnectionsPerHost = 64
        /// The default most connections in all: 256.
        public static let defaultMaximumConnections = 256
        /// The default connect timeout: 30 seconds.
        public static let defaultConnectTimeout: Duration = .seconds(30)
        /// The default most bytes of a streamed body that wait unread before the transfer pauses: 1 MiB.
        public static let defaultStreamBufferLimit = 1 << 20
        /// The default most requests multiplexed on one HTTP/2 connection: 1000 (libcurl's own default is 100).
        public static let defaultMaximumStreamsPerConnection = 1000

        /// The most connections open to one host (scheme, host and port) at once; `0` for no limit. Requests over
        /// it wait for a connection (with HTTP/2 they share one). HTTP/1.1 requests (an `http` URL, or
        /// ``httpVersion`` `.http1`) wait in the transport's own line, in the order they were made, and reach libcurl
        /// as the host's transfers end, so a waiting request costs no CPU; it can be cancelled, and its timeout
        /// counts, while it waits.
        public var maximumConnectionsPerHost: Int
        /// The most connections open at once, to all hosts; `0` for no limit. It also bounds the connections kept
        /// open for reuse.
        public var maximumConnections: Int
        /// The most time to set up a connection (TCP and TLS); `nil` for libcurl's default (300 s).
        public var connectTimeout: Duration?
        /// A transfer that moves fewer than ``stallBytesPerSecond`` bytes per second for this long fails with a
        /// timeout (`NetworkAgentError.Code.timedOut`); `nil` (the default) for no stall check. Whole seconds,
        /// rounded up.
        public var stallTimeout: Duration?
        /// The speed below which a transfer counts as stalled; 1 byte per second by default.
        public var stallBytesPerSecond: Int
        /// The most requests multiplexed on one HTTP/2 connection at once (libcurl's
        /// `CURLMOPT_MAX_CONCURRENT_STREAMS`), within what the server allows; requests past it open another
        /// connection, up to ``maximumConnectionsPerHost``.
        public var maximumStreamsPerConnection: Int
        /// A PEM file of CA certificates to trust (libcurl's `CURLOPT_CAINFO`). It replaces libcurl's default
        /// bundle file; a libcurl built with a CA directory (Debian's: `/etc/ssl/certs`) still trusts that too, so
        /// on Debian this adds CAs to the system's.
        public var caBundle: URL?
        /// The server's public key, pinned: `sha256//` and the base64 SHA-256 of its DER SubjectPublicKeyInfo
        /// (several joined by `;`), or a path to a PEM/DER key file. A connection to a server with another key
        /// fails with `URLError.Code.serverCertificateUntrusted`.
        public var pinnedPublicKey: String?
        /// The proxy for every request, as libcurl reads it (`http://host:port`, `socks5h://host`, …). `nil` (the
        /// default) uses the environment as libcurl does: `http_proxy` (lowercase only) for `http`,
        /// `https_proxy`/`HTTPS_PROXY` for `https`, `all_proxy`/`ALL_PROXY` for both and `no_proxy`/`NO_PROXY`
        /// for exceptions. `""` turns proxies off, the environment's too.
        public var proxy: String?
        /// Whether the transport keeps cookies; ``Cookies/none`` by default.
        public var cookies: Cookies
        /// The most bytes of a streamed body that wait unread before the transfer pauses until the consumer has
        /// read them; memory stays bounded whatever the body's size.
        public var streamBufferLimit: Int
        /// The most redirects followed for one request; `0` returns 3xx responses to the caller.
        public var maximumRedirects: Int
        /// The HTTP version asked for; ``HTTPVersion/http2`` by default.
        public var httpVersion: HTTPVersion

        /// Creates a configuration; every parameter has the default its property documents.
        ///
        /// - Parameters:
        ///   - maximumConnectionsPerHost: See ``maximumConnectionsPerHost``.
        ///   - maximumConnections: See ``maximumConnections``.
        ///   - connectTimeout: See ``connectTimeout``.
        ///   - stallTimeout: See ``stallTimeout``.
        ///   - stallBytesPerSecond: See ``stallBytesPerSecond``.
        ///   - caBundle: See ``caBundle``.
        ///   - pinnedPublicKey: See ``pinnedPublicKey``.
        ///   - proxy: See ``proxy``.
        ///   - cookies: See ``cookies``.
        ///   - streamBufferLimit: See ``streamBufferLimit``.
        ///   - maximumRedirects: See ``maximumRedirects``.
        ///   - httpVersion: See ``httpVersion``.
        ///   - maximumStreamsPerConnection: See ``maximumStreamsPerConnection``.
        public init(
            maximumConnectionsPerHost: Int = Configuration.defaultMaximumConnectionsPerHost,
            maximumConnections: Int = Configuration.defaultMaximumConnections,
            connectTimeout: Duration? = Configuration.defaultConnectTimeout,
            stallTimeout: Duration? = nil,
            stallBytesPerSecond: Int = 1,
            caBundle: URL? = nil,
            pinnedPublicKey: String? = nil,
            proxy: String? = nil,
            cookies: Cookies = .none,
            streamBufferLimit: Int = Configuration.defaultStreamBufferLimit,
            maximumRedirects: Int = URLSessionTransport.defaultMaximumRedirects,
            httpVersion: HTTPVersion = .http2,
            maximumStreamsPerConnection: Int = Configuration.defaultMaximumStreamsPerConnection
        ) {
            self.maximumConnectionsPerHost = max(0, maximumConnectionsPerHost)
            self.maximumConnections = max(0, maximumConnections)
            self.connectTimeout = connectTimeout
            self.stallTimeout = stallTimeout
            self.stallBytesPerSecond = max(1, stallBytesPerSecond)
            self.caBundle = caBundle
            self.pinnedPublicKey = pinnedPublicKey
            self.proxy = proxy
            self.cookies = cookies
            self.streamBufferLimit = max(1, streamBufferLimit)
            self.maximumRedirects = max(0, maximumRedirects)
            self.httpVersion = httpVersion
            self.maximumStreamsPerConnection = max(1, maximumStreamsPerConnection)
        }
    }
}
