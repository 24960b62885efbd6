import CCurl
import Foundation
import Testing

@testable import NetworkAgentCurl

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// libcurl's results map to the `URLError` codes URLSession gives for the same failures (checked over the wire for
/// refused, unknown host, reset and timeout in CurlTransportTests; TLS here, checked by hand against nginx with a
/// test CA: unknown root gives 60 with X.509 result 20, a name mismatch 60 with 0, a wrong pin 90).
@Suite struct CurlErrorMappingTests {
    @Test(arguments: [
        (CURLE_COULDNT_RESOLVE_HOST, 0, URLError.Code.cannotFindHost),
        (CURLE_COULDNT_CONNECT, 0, .cannotConnectToHost),
        (CURLE_OPERATION_TIMEDOUT, 0, .timedOut),
        (CURLE_RECV_ERROR, 0, .networkConnectionLost),
        (CURLE_SEND_ERROR, 0, .networkConnectionLost),
        (CURLE_GOT_NOTHING, 0, .networkConnectionLost),
        (CURLE_PARTIAL_FILE, 0, .networkConnectionLost),
        (CURLE_WEIRD_SERVER_REPLY, 0, .badServerResponse),
        (CURLE_PEER_FAILED_VERIFICATION, 20, .serverCertificateHasUnknownRoot),
        (CURLE_PEER_FAILED_VERIFICATION, 18, .serverCertificateHasUnknownRoot),
        (CURLE_PEER_FAILED_VERIFICATION, 10, .serverCertificateHasBadDate),
        (CURLE_PEER_FAILED_VERIFICATION, 0, .serverCertificateUntrusted),
        (CURLE_SSL_PINNEDPUBKEYNOTMATCH, 0, .serverCertificateUntrusted),
        (CURLE_SSL_CONNECT_ERROR, 0, .secureConnectionFailed),
        (CURLE_SSL_CACERT_BADFILE, 0, .secureConnectionFailed),
    ])
    func codesMapAsURLSessions(code: CURLcode, verifyResult: Int, expected: URLError.Code) {
        #expect(CurlErrors.urlErrorCode(for: code, verifyResult: verifyResult) == expected)
    }
}
