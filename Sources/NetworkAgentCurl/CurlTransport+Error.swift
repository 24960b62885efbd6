import Foundation
import NetworkAgent

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension CurlTransport {
    /// What libcurl said when a ``CurlTransport`` request failed, with libcurl's own numbers kept as typed fields.
    ///
    /// A request's error is always a ``/NetworkAgent/NetworkAgentError``; this is found in it with
    /// `curlError`. A transfer that libcurl failed (refused, reset, DNS, TLS…) is a
    /// `transport` error whose underlying `URLError` carries the code URLSession would give (so plugins see no
    /// difference between the transports), and this error (code ``Code-swift.struct/transferFailed``) holds
    /// libcurl's `CURLcode` in ``curlCode`` and, for a certificate that failed verification, the X.509 result in
    /// ``tlsVerifyResult``. Failures of the transport itself (a missing libcurl feature, a refused option, a failed
    /// multi handle, a shut-down transport) are `transport` errors whose `underlying` is this error.
    ///
    /// Compare ``code`` with the static codes; new codes may be added without breaking callers.
    ///
    /// ```swift
    /// let transport = CurlTransport()
    /// var request = URLRequest(url: URL(fileURLWithPath: "/"))
    /// request.url = URL(string: "https://example.com/")
    /// do {
    ///     _ = try await transport.send(request)
    /// } catch let error as NetworkAgentError where error.curlError?.code == .transferFailed {
    ///     print("libcurl error", error.curlError?.curlCode ?? 0, "X.509", error.curlError?.tlsVerifyResult ?? 0)
    /// } catch {
    ///     print(error)
    /// }
    /// await transport.shutdown()
    /// ```
    public struct Error: Swift.Error, Sendable, Hashable, CustomStringConvertible {
        /// What kind of failure this is.
        public struct Code: Hashable, Sendable, CustomStringConvertible {
            private enum Base: Sendable {
                case missingFeatures, optionRefused, transferFailed, engineFailed, shutdown
            }
            private let base: Base

            /// The libcurl loaded lacks a feature the transport needs (``Error/missingFeatures``); no request of
            /// the transport is sent.
            public static let missingFeatures = Code(base: .missingFeatures)
            /// libcurl refused an option the request needs (``Error/option``, with its `CURLcode` in
            /// ``Error/curlCode``): a TLS, pinning, verification, protocol or redirect option, or one that makes
            /// the request what was asked for. The request was not sent.
            public static let optionRefused = Code(base: .optionRefused)
            /// libcurl ended the transfer with an error (``Error/curlCode``, and ``Error/tlsVerifyResult`` for a
            /// certificate that failed verification).
            public static let transferFailed = Code(base: .transferFailed)
            /// libcurl's multi handle failed (`curl_multi_perform` or `curl_multi_poll`; its `CURLMcode` in
            /// ``Error/curlMultiCode``): every transfer in flight failed with it.
            public static let engineFailed = Code(base: .engineFailed)
            /// The transport was shut down (``CurlTransport/shutdown()``) before or while the request ran.
            public static let shutdown = Code(base: .shutdown)

            /// A short, stable name safe for logs and metrics labels, e.g. `option_refused`.
            public var description: String {
                switch base {
                case .missingFeatures: "missing_features"
                case .optionRefused: "option_refused"
                case .transferFailed: "transfer_failed"
                case .engineFailed: "engine_failed"
                case .shutdown: "shutdown"
                }
            }
        }

        /// What kind of failure this is.
        public let code: Code
        /// libcurl's `CURLcode` for a failed transfer or a refused option, e.g. `7` (`CURLE_COULDNT_CONNECT`).
        public let curlCode: Int?
        /// libcurl's `CURLMcode` for a failed multi handle (``Code-swift.struct/engineFailed``).
        public let curlMultiCode: Int?
        /// The X.509 verification result of a transfer whose certificate failed verification
        /// (`CURLE_PEER_FAILED_VERIFICATION`), e.g. `20` (unable to get the local issuer certificate); a name that does
        /// not match gives `1` with libcurl 7.88 and OpenSSL 3 (measured against nginx). `nil` where no certificate
        /// check failed.
        public let tlsVerifyResult: Int?
        /// The option libcurl refused, by libcurl's name, e.g. `CURLOPT_PINNEDPUBLICKEY`.
        public let option: String?
        /// libcurl's message (its error buffer, or the text of the code), when there is one.
        public let detail: String?
        /// The missing features, by libcurl's names (`SSL`, `HTTP2`, `AsynchDNS`); empty for other codes.
        public let missingFeatures: [String]
        /// The version of the libcurl loaded, e.g. `7.88.1`.
        public let libcurlVersion: String

        /// Creates the error of a libcurl that lacks features (``Code-swift.struct/missingFeatures``).
        ///
        /// - Parameters:
        ///   - missingFeatures: The missing features, by libcurl's names.
        ///   - libcurlVersion: The version of the libcurl loaded.
        public init(missingFeatures: [String], libcurlVersion: String) {
            self.init(.missingFeatures, missingFeatures: missingFeatures, libcurlVersion: libcurlVersion)
        }

        /// Creates an error of any code (this package's transport builds them).
        package init(
            _ code: Code,
            curlCode: Int? = nil,
            curlMultiCode: Int? = nil,
            tlsVerifyResult: Int? = nil,
            option: String? = nil,
            detail: String? = nil,
            missingFeatures: [String] = [],
            libcurlVersion: String? = nil
        ) {
            self.code = code
            self.curlCode = curlCode
            self.curlMultiCode = curlMultiCode
            self.tlsVerifyResult = tlsVerifyResult
            self.option = option
            self.detail = detail
            self.missingFeatures = missingFeatures
            self.libcurlVersion = libcurlVersion ?? CurlRuntime.version
        }

        /// A short, stable description safe as a metrics label: the code's name, e.g. `transfer_failed`.
        public var shortDescription: String { code.description }

        /// What failed, with libcurl's numbers.
        public var description: String {
            switch code {
            case .missingFeatures:
                return "libcurl \(libcurlVersion) lacks \(missingFeatures.joined(separator: ", ")), which "
                    + "CurlTransport needs"
            case .optionRefused:
                return "libcurl \(libcurlVersion) refused \(option ?? "an option") (libcurl error \(curlCode ?? 0)"
                    + "\(detail.map { ": \($0)" } ?? "")); the request was not sent"
            case .engineFailed:
                return "libcurl's multi handle failed (libcurl multi error \(curlMultiCode ?? 0)"
                    + "\(detail.map { ": \($0)" } ?? ""))"
            case .shutdown:
                return "the CurlTransport was shut down"
            default:
                var text = "\(detail ?? "libcurl error") (libcurl error \(curlCode ?? 0)"
                if let tlsVerifyResult { text += ", X.509 verify result \(tlsVerifyResult)" }
                return text + ")"
            }
        }
    }
}

extension NetworkAgentError {
    /// What libcurl said, when a ``CurlTransport`` request failed: the ``CurlTransport/Error`` underlying this error
    /// (directly, or inside its `URLError`), or `nil` for an error of another kind or transport.
    public var curlError: CurlTransport.Error? {
        if let error = underlying as? CurlTransport.Error { return error }
        return (underlying as? URLError)?.userInfo[NSUnderlyingErrorKey] as? CurlTransport.Error
    }
}
