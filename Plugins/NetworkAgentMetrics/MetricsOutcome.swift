import Foundation
import NetworkAgent

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// How a request or an attempt ended; its ``description`` is the `outcome` label.
///
/// Every label comes from a fixed set, so the label stays low-cardinality whatever the server or the network do.
public enum MetricsOutcome: Hashable, Sendable, CustomStringConvertible {
    /// A response with a status below 400 (or a response that is not HTTP): `success`.
    case success
    /// A response with a status of 400 or more: `http_error`. The `status_class` label tells 4xx from 5xx.
    case httpError
    /// The network failed before a complete response: `transport_error:<kind>`, e.g.
    /// `transport_error:connection_refused`.
    case transportError(MetricsTransportErrorKind)
    /// The calling task was cancelled: `cancelled`.
    case cancelled
    /// The request's deadline passed: `timed_out`.
    case timedOut
    /// Any other failure: `error:<code>` with the ``/NetworkAgent/NetworkAgentError/Code`` name (`error:invalid_url`,
    /// `error:redirect_failed`…), or `error:other` for an error that is not a `NetworkAgentError` (one a plugin
    /// threw).
    case failed(String)

    /// The label: `success`, `http_error`, `transport_error:<kind>`, `cancelled`, `timed_out` or `error:<code>`.
    public var description: String {
        switch self {
        case .success: "success"
        case .httpError: "http_error"
        case .transportError(let kind): "transport_error:\(kind.rawValue)"
        case .cancelled: "cancelled"
        case .timedOut: "timed_out"
        case .failed(let code): "error:\(code)"
        }
    }

    /// The outcome of a response: ``httpError`` for an HTTP status of 400 or more, else ``success``.
    ///
    /// - Parameter response: The response handed back through the chain.
    public init(response: URLResponse) {
        if let http = response as? HTTPURLResponse, http.statusCode >= 400 {
            self = .httpError
        } else {
            self = .success
        }
    }

    /// The outcome of a failure.
    ///
    /// A ``/NetworkAgent/NetworkAgentError`` maps by its code (`.unacceptableStatus` with a response is an
    /// ``httpError``, `.transport` a ``transportError(_:)`` of the kind its `URLError` tells), a `CancellationError` or
    /// `URLError(.cancelled)` is ``cancelled``, a `URLError(.timedOut)` is ``timedOut``, anything else is
    /// `failed("other")`.
    ///
    /// - Parameter error: What the exchange threw.
    public init(error: any Error) {
        switch error {
        case let error as NetworkAgentError:
            switch error.code {
            case .cancelled: self = .cancelled
            case .timedOut: self = .timedOut
            case .transport: self = .transportError(MetricsTransportErrorKind(error.urlErrorCode))
            case .unacceptableStatus where error.response != nil: self = .httpError
            default: self = .failed(error.code.description)
            }
        case is CancellationError:
            self = .cancelled
        case let error as URLError:
            switch error.code {
            case .cancelled: self = .cancelled
            case .timedOut: self = .timedOut
            default: self = .transportError(MetricsTransportErrorKind(error.code))
            }
        default:
            self = .failed("other")
        }
    }
}

/// What kind of network failure a transport error was, from its `URLError` code.
public enum MetricsTransportErrorKind: String, Hashable, Sendable, CaseIterable {
    /// Nothing listened at the address, or the connection could not be made (`cannotConnectToHost`).
    case connectionRefused = "connection_refused"
    /// The connection broke during the exchange (`networkConnectionLost`).
    case connectionLost = "connection_lost"
    /// The host name did not resolve (`cannotFindHost`, `dnsLookupFailed`).
    case dns
    /// The device is offline (`notConnectedToInternet`).
    case offline
    /// The TLS handshake or a certificate failed (`secureConnectionFailed`, `serverCertificate…`,
    /// `clientCertificate…`).
    case tls
    /// The server's answer could not be read (`badServerResponse`, `cannotParseResponse`, `zeroByteResource`,
    /// `cannotDecodeRawData`, `cannotDecodeContentData`).
    case badResponse = "bad_response"
    /// Any other transport failure, including one without a `URLError`.
    case other

    /// The kind of a `URLError` code.
    ///
    /// - Parameter code: The code, or `nil` when the failure carried no `URLError`.
    public init(_ code: URLError.Code?) {
        switch code {
        case .cannotConnectToHost?: self = .connectionRefused
        case .networkConnectionLost?: self = .connectionLost
        case .cannotFindHost?, .dnsLookupFailed?: self = .dns
        case .notConnectedToInternet?: self = .offline
        case .secureConnectionFailed?, .serverCertificateHasBadDate?, .serverCertificateUntrusted?,
            .serverCertificateHasUnknownRoot?, .serverCertificateNotYetValid?, .clientCertificateRejected?,
            .clientCertificateRequired?:
            self = .tls
        case .badServerResponse?, .cannotParseResponse?, .zeroByteResource?, .cannotDecodeRawData?,
            .cannotDecodeContentData?:
            self = .badResponse
        default: self = .other
        }
    }
}
