import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// When each phase of one transfer ended, measured from its start: what a transport that can see them (libcurl's
/// `*_TIME_T` infos) reports on its response as `URLResponse.transferTimings`.
///
/// Each value is cumulative, from the start of the transfer to the end of the phase, so for a new connection
/// `nameLookup ≤ connect ≤ tlsHandshake ≤ preTransfer ≤ firstByte ≤ total`. A phase that did not happen is `nil` or
/// zero: a reused connection has no lookup, connect or handshake; plain `http` has no TLS handshake.
/// ``URLSessionTransport`` reports none (FoundationNetworking delivers no task metrics on Linux).
///
/// For a redirected request they are the last hop's. For a streamed response they are known when the headers
/// arrive, so ``total`` is `nil` there.
public struct HTTPTransferTimings: Sendable, Hashable {
    /// The host name was resolved.
    public var nameLookup: Duration?
    /// The TCP connection (or the proxy's) was established.
    public var connect: Duration?
    /// The TLS handshake ended.
    public var tlsHandshake: Duration?
    /// The request was about to be sent: every negotiation done.
    public var preTransfer: Duration?
    /// The first byte of the response arrived.
    public var firstByte: Duration?
    /// The whole transfer ended.
    public var total: Duration?

    /// Creates timings; each is measured from the start of the transfer, `nil` when unknown.
    ///
    /// - Parameters:
    ///   - nameLookup: When the host name was resolved.
    ///   - connect: When the connection was established.
    ///   - tlsHandshake: When the TLS handshake ended.
    ///   - preTransfer: When the request was about to be sent.
    ///   - firstByte: When the first byte of the response arrived.
    ///   - total: When the transfer ended.
    public init(
        nameLookup: Duration? = nil,
        connect: Duration? = nil,
        tlsHandshake: Duration? = nil,
        preTransfer: Duration? = nil,
        firstByte: Duration? = nil,
        total: Duration? = nil
    ) {
        self.nameLookup = nameLookup
        self.connect = connect
        self.tlsHandshake = tlsHandshake
        self.preTransfer = preTransfer
        self.firstByte = firstByte
        self.total = total
    }
}

extension URLResponse {
    /// The transfer's per-phase timings, when the transport measured them (see ``HTTPTransferTimings``); `nil`
    /// otherwise, and on a response a plugin built anew.
    public var transferTimings: HTTPTransferTimings? {
        (self as? TimedHTTPURLResponse)?.timings
    }
}

extension HTTPURLResponse {
    /// Makes a response that carries per-phase timings, read back as `transferTimings`.
    ///
    /// - Parameters:
    ///   - timings: The timings; `nil` makes a plain response.
    ///   - url: The URL the response came from.
    ///   - statusCode: The status code.
    ///   - httpVersion: The protocol version, such as `HTTP/1.1` or `HTTP/2`.
    ///   - headerFields: The header fields.
    /// - Returns: The response, or `nil` when `HTTPURLResponse` itself refuses the values.
    public static func withTransferTimings(
        _ timings: HTTPTransferTimings?,
        url: URL,
        statusCode: Int,
        httpVersion: String?,
        headerFields: [String: String]?
    ) -> HTTPURLResponse? {
        guard let timings else {
            return HTTPURLResponse(
                url: url,
                statusCode: statusCode,
                httpVersion: httpVersion,
                headerFields: headerFields
            )
        }
        return TimedHTTPURLResponse(
            timings: timings,
            url: url,
            statusCode: statusCode,
            httpVersion: httpVersion,
            headerFields: headerFields
        )
    }
}

/// An `HTTPURLResponse` with timings. `@unchecked Sendable` as its superclass is: the one stored property is a
/// constant of a `Sendable` type.
final class TimedHTTPURLResponse: HTTPURLResponse, @unchecked Sendable {
    let timings: HTTPTransferTimings
    /// The fields as handed to the initializer, before Foundation's canonical spelling of their names: what
    /// ``HTTPURLResponse/headerField(_:)`` reads instead of Foundation's look-up, which lowercases every name per call.
    /// The same dictionary the initializer was given (a reference, not a copy).
    let givenFields: [String: String]?

    init?(
        timings: HTTPTransferTimings,
        url: URL,
        statusCode: Int,
        httpVersion: String?,
        headerFields: [String: String]?
    ) {
        self.timings = timings
        givenFields = headerFields
        super.init(url: url, statusCode: statusCode, httpVersion: httpVersion, headerFields: headerFields)
    }

    required init?(coder: NSCoder) {
        nil
    }
}
