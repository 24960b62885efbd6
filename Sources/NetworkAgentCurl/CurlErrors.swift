import CCurl
import Foundation
import NetworkAgent

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Maps how a transfer ended to the errors ``URLSessionTransport`` throws for the same failures, so that plugins
/// (retry's classification above all) see no difference between the transports.
enum CurlErrors {
    /// The `URLError` code URLSession reports for a libcurl result (and, for a failed certificate check, the
    /// X.509 verification result).
    static func urlErrorCode(for code: CURLcode, verifyResult: Int) -> URLError.Code {
        switch code {
        case CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_RESOLVE_PROXY: .cannotFindHost
        case CURLE_COULDNT_CONNECT, CURLE_PROXY: .cannotConnectToHost
        case CURLE_OPERATION_TIMEDOUT: .timedOut
        case CURLE_RECV_ERROR, CURLE_SEND_ERROR, CURLE_GOT_NOTHING, CURLE_PARTIAL_FILE, CURLE_HTTP2,
            CURLE_HTTP2_STREAM, CURLE_SEND_FAIL_REWIND:
            .networkConnectionLost
        case CURLE_WEIRD_SERVER_REPLY: .badServerResponse
        // The transport asks libcurl to decode no content coding: this is a transfer coding it cannot decode.
        case CURLE_BAD_CONTENT_ENCODING: .cannotDecodeContentData
        case CURLE_UNSUPPORTED_PROTOCOL: .unsupportedURL
        case CURLE_URL_MALFORMAT: .badURL
        case CURLE_PEER_FAILED_VERIFICATION:
            switch verifyResult {
            // X509_V_ERR_CERT_NOT_YET_VALID, X509_V_ERR_CERT_HAS_EXPIRED
            case 9: .serverCertificateNotYetValid
            case 10: .serverCertificateHasBadDate
            // Self-signed leaf or chain, unknown issuer, a leaf that cannot be checked: no trusted root.
            case 2, 18, 19, 20, 21: .serverCertificateHasUnknownRoot
            // 0: the chain verified but the name did not match (libcurl checks names itself).
            default: .serverCertificateUntrusted
            }
        case CURLE_SSL_PINNEDPUBKEYNOTMATCH, CURLE_SSL_ISSUER_ERROR, CURLE_SSL_INVALIDCERTSTATUS:
            .serverCertificateUntrusted
        case CURLE_SSL_CERTPROBLEM, CURLE_SSL_CLIENTCERT: .clientCertificateRejected
        case CURLE_SSL_CONNECT_ERROR, CURLE_SSL_CIPHER, CURLE_SSL_CACERT_BADFILE, CURLE_SSL_SHUTDOWN_FAILED,
            CURLE_SSL_CRL_BADFILE:
            .secureConnectionFailed
        case CURLE_READ_ERROR: .cannotLoadFromNetwork
        case CURLE_OUT_OF_MEMORY: .cannotLoadFromNetwork
        default: .unknown
        }
    }

    static func error(
        for code: CURLcode,
        message: String?,
        verifyResult: Int,
        transfer: CurlTransfer
    ) -> NetworkAgentError {
        if code == CURLE_OPERATION_TIMEDOUT { return HTTPTransportContext.timedOut(transfer.request) }
        let urlCode = urlErrorCode(for: code, verifyResult: verifyResult)
        let libcurlMessage = message ?? String(cString: curl_easy_strerror(code))
        let detail = code == CURLE_BAD_CONTENT_ENCODING ? undecodable(transfer, libcurlMessage) : libcurlMessage
        // The X.509 result means something only when the certificate check failed (1 for a name mismatch, measured).
        let facts = CurlTransport.Error(
            .transferFailed,
            curlCode: Int(code.rawValue),
            tlsVerifyResult: code == CURLE_PEER_FAILED_VERIFICATION ? verifyResult : nil,
            detail: libcurlMessage
        )
        let urlError = URLError(
            urlCode,
            userInfo: [
                NSLocalizedDescriptionKey: "\(detail) (libcurl error \(code.rawValue))",
                NSURLErrorFailingURLErrorKey: transfer.url,
                NSUnderlyingErrorKey: facts,
            ]
        )
        return HTTPTransportContext.error(for: urlError, request: transfer.request)
    }

    /// The message of a response whose transfer coding libcurl cannot decode (RFC 9112 §6.1): its framing and
    /// content cannot be trusted, so the exchange fails rather than hand on bytes that may be cut or still encoded.
    private static func undecodable(_ transfer: CurlTransfer, _ libcurlMessage: String) -> String {
        let codings = transfer.responseHeaders
            .filter { $0.name.caseInsensitiveCompare("Transfer-Encoding") == .orderedSame }
            .map(\.value)
            .joined(separator: ", ")
        return "the response's Transfer-Encoding \"\(codings)\" has a coding this client cannot decode "
            + "(\(libcurlMessage))"
    }

    static func error(for stop: CurlTransfer.Stop, transfer: CurlTransfer) -> NetworkAgentError {
        switch stop {
        case .cancelled:
            NetworkAgentError(.cancelled, "the request was cancelled")
        case .consumerGone:
            NetworkAgentError(.cancelled, "the stream was cancelled")
        case .timedOut:
            HTTPTransportContext.timedOut(transfer.request)
        case .engineFailed(let facts):
            NetworkAgentError(
                .transport,
                "\(transfer.request.url?.absoluteString ?? "the server"): \(facts.description)",
                underlying: facts
            )
        case .shutdown:
            shutdown(request: transfer.request)
        case .bodyUnreadable(let detail):
            HTTPTransportContext.error(
                for: URLError(
                    .cannotLoadFromNetwork,
                    userInfo: [
                        NSLocalizedDescriptionKey: "the request body could not be read (\(detail))",
                        NSURLErrorFailingURLErrorKey: transfer.url,
                    ]
                ),
                request: transfer.request
            )
        case .refused(let option, let code):
            refused(option, code: code, request: transfer.request)
        case .unavailable(let message):
            engineError(message, request: transfer.request)
        case .responseTooLarge(let limit):
            HTTPTransportContext.responseTooLarge(
                limit: limit,
                request: transfer.request,
                response: transfer.makeResponse()
            )
        }
    }

    /// The error of a request not sent because libcurl refused one of its options.
    static func refused(_ option: CURLoption, code: CURLcode, request: URLRequest) -> NetworkAgentError {
        let facts = CurlTransport.Error(
            .optionRefused,
            curlCode: Int(code.rawValue),
            option: CurlOptions.name(of: option),
            detail: String(cString: curl_easy_strerror(code))
        )
        return NetworkAgentError(
            .transport,
            "\(request.url?.absoluteString ?? "the request"): \(facts.description)",
            underlying: facts
        )
    }

    /// The error of a request the transport's ``CurlTransport/shutdown()`` ended, or that came after it.
    static func shutdown(request: URLRequest) -> NetworkAgentError {
        let facts = CurlTransport.Error(.shutdown)
        return NetworkAgentError(
            .transport,
            "\(request.url?.absoluteString ?? "the request"): \(facts.description)",
            underlying: facts
        )
    }

    static func engineError(_ message: String, request: URLRequest) -> NetworkAgentError {
        HTTPTransportContext.error(
            for: URLError(.cannotLoadFromNetwork, userInfo: [NSLocalizedDescriptionKey: message]),
            request: request
        )
    }
}
