import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The one error type of NetworkAgent: URL building, encoding, transport, timeout, cancellation and
/// validation failures.
///
/// Compare ``code`` with the static codes; new codes may be added without breaking callers.
///
/// ```swift
/// do { _ = try await provider.request(endpoint: .posts) }
/// catch let error as NetworkAgentError where error.code == .timedOut { print("timed out:", error.message) }
/// ```
public struct NetworkAgentError: Error, Sendable, CustomStringConvertible {
    /// What kind of failure this is.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Base: String, Sendable {
            case invalidURL, encoding, invalidHeader, transport, timedOut, cancelled, redirectFailed
            case invalidResponse, unacceptableStatus, decoding, streamOverflow
            case invalidTimeout, responseTooLarge, circuitOpen
        }
        private let base: Base

        /// The endpoint's base URL and path do not form a valid URL.
        public static let invalidURL = Code(base: .invalidURL)
        /// A body or query could not be encoded (a value `JSONSerialization` rejects, an unsupported
        /// `requestWithoutAttributes` content, an unreadable multipart file, a body on `GET`).
        public static let encoding = Code(base: .encoding)
        /// A header name or value is not allowed (CR, LF or NUL in it, or an empty or non-token name).
        public static let invalidHeader = Code(base: .invalidHeader)
        /// The exchange failed on the network: refused, reset, DNS, TLS… ``NetworkAgentError/urlErrorCode``
        /// tells which.
        public static let transport = Code(base: .transport)
        /// The request's deadline passed.
        public static let timedOut = Code(base: .timedOut)
        /// The caller's task was cancelled.
        public static let cancelled = Code(base: .cancelled)
        /// A redirect could not be followed: too many hops, a `Location` that is not an http(s) URL, or a
        /// 307/308 whose streamed body cannot be sent again.
        public static let redirectFailed = Code(base: .redirectFailed)
        /// The server's answer was not a usable HTTP response.
        public static let invalidResponse = Code(base: .invalidResponse)
        /// A validation plugin rejected the status code, or a streamed response was not 2xx.
        public static let unacceptableStatus = Code(base: .unacceptableStatus)
        /// A streamed line could not be decoded (``HTTPBodySequence/ndjson(as:decoder:)``).
        public static let decoding = Code(base: .decoding)
        /// A streamed body's consumer fell further behind than the transport's buffer limit allows.
        public static let streamOverflow = Code(base: .streamOverflow)
        /// A request's `timeoutInterval` is negative or not a number (an infinite or huge one means no deadline).
        public static let invalidTimeout = Code(base: .invalidTimeout)
        /// A response body grew past the call's byte limit
        /// (``NetworkAgentEndpoint/maximumResponseBytes`` or ``NetworkAgentConfiguration/maximumResponseBytes``);
        /// the transfer was stopped there. `response` is the response head when it had arrived.
        public static let responseTooLarge = Code(base: .responseTooLarge)
        /// A circuit breaker failed the call fast, unsent: its origin has been failing. `underlying` is the breaker's
        /// own error, which says until when (`CircuitBreakerPlugin.Error` of NetworkAgentCircuitBreaker). Never
        /// retried by the retry plugin; a cache may answer it with a stale response under `stale-if-error`, as it
        /// does a 503.
        public static let circuitOpen = Code(base: .circuitOpen)

        /// A short, stable name safe for logs and metrics labels, e.g. `timed_out`.
        public var description: String {
            switch base {
            case .invalidURL: "invalid_url"
            case .encoding: "encoding"
            case .invalidHeader: "invalid_header"
            case .transport: "transport"
            case .timedOut: "timed_out"
            case .cancelled: "cancelled"
            case .redirectFailed: "redirect_failed"
            case .invalidResponse: "invalid_response"
            case .unacceptableStatus: "unacceptable_status"
            case .decoding: "decoding"
            case .streamOverflow: "stream_overflow"
            case .invalidTimeout: "invalid_timeout"
            case .responseTooLarge: "response_too_large"
            case .circuitOpen: "circuit_open"
            }
        }
    }

    /// What kind of failure this is.
    public let code: Code
    /// A human-readable explanation. May name URLs; never contains header values.
    public let message: String
    /// The error that caused this one, such as a `URLError` from the transport.
    public let underlying: (any Error)?
    /// The response, where the failure came with one (validation, redirects).
    public let response: HTTPURLResponse?
    /// The response body, where there is one.
    public let data: Data?

    /// Creates an error.
    ///
    /// - Parameters:
    ///   - code: What kind of failure this is.
    ///   - message: A human-readable explanation.
    ///   - underlying: The error that caused this one.
    ///   - response: The response, if any.
    ///   - data: The response body, if any.
    public init(
        _ code: Code,
        _ message: String,
        underlying: (any Error)? = nil,
        response: HTTPURLResponse? = nil,
        data: Data? = nil
    ) {
        self.code = code
        self.message = message
        self.underlying = underlying
        self.response = response
        self.data = data
    }

    /// A short, stable description safe as a metrics label: the code's name, e.g. `timed_out`.
    public var shortDescription: String { code.description }

    /// The status code of ``response``, if any.
    public var statusCode: Int? { response?.statusCode }

    /// The `URLError` code behind a transport failure, if any.
    public var urlErrorCode: URLError.Code? { (underlying as? URLError)?.code }

    /// `NetworkAgentError(code): message`, plus the status code where there is one.
    public var description: String {
        var text = "NetworkAgentError(\(code)): \(message)"
        if let status = response?.statusCode { text += " [HTTP \(status)]" }
        return text
    }
}
