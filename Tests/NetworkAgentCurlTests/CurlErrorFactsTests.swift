import CCurl
import Foundation
import NetworkAgent
import NetworkAgentTestServer
import Testing

@testable import NetworkAgentCurl

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A failed transfer's error keeps libcurl's numbers as typed fields (`curlError.curlCode`, `.tlsVerifyResult`),
/// beside the `URLError` code URLSession would give. The TLS results over the wire are in the interop suite
/// (CurlTLSErrorFactsTests).
@Suite struct CurlErrorFactsTests {
    let transport = CurlTransport()

    @Test func aRefusedConnectionKeepsItsCURLcode() async throws {
        let server = try LoopbackServer { _ in .text("ok") }
        let closed = request(server, "/")
        server.stop()
        let error = await networkError { _ = try await transport.send(closed) }
        #expect(error?.urlErrorCode == .cannotConnectToHost)
        let facts = try #require(error?.curlError)
        #expect(facts.code == .transferFailed)
        #expect(facts.curlCode == Int(CURLE_COULDNT_CONNECT.rawValue))
        #expect(facts.tlsVerifyResult == nil)
        #expect(facts.shortDescription == "transfer_failed")
    }

    @Test func anUnknownHostKeepsItsCURLcode() async throws {
        var lookup = URLRequest(url: URL(string: "http://no-such-host.invalid/")!)
        lookup.timeoutInterval = 10
        let error = await networkError { _ = try await transport.send(lookup) }
        #expect(error?.urlErrorCode == .cannotFindHost)
        #expect(error?.curlError?.curlCode == Int(CURLE_COULDNT_RESOLVE_HOST.rawValue))
    }

    @Test(arguments: [
        (CURLE_PEER_FAILED_VERIFICATION, 20, 20 as Int?, URLError.Code.serverCertificateHasUnknownRoot),
        (CURLE_PEER_FAILED_VERIFICATION, 0, 0, .serverCertificateUntrusted),
        (CURLE_SSL_PINNEDPUBKEYNOTMATCH, 0, nil, .serverCertificateUntrusted),
        (CURLE_RECV_ERROR, 0, nil, .networkConnectionLost),
    ])
    func aTLSFailureKeepsItsVerifyResult(code: CURLcode, verifyResult: Int, kept: Int?, urlCode: URLError.Code) {
        let transfer = CurlTransfer.plainGET(URL(string: "https://example.invalid/")!)
        let error = CurlErrors.error(
            for: code,
            message: "libcurl says no",
            verifyResult: verifyResult,
            transfer: transfer
        )
        #expect(error.urlErrorCode == urlCode)
        #expect(error.curlError?.curlCode == Int(code.rawValue))
        #expect(error.curlError?.tlsVerifyResult == kept)
        #expect(error.curlError?.detail == "libcurl says no")
        #expect(error.message.contains("(libcurl error \(code.rawValue))"))
    }

    @Test func theErrorHasOpaqueCodesAndKeepsItsOldInitializer() {
        let missing = CurlTransport.Error(missingFeatures: ["HTTP2"], libcurlVersion: "1.2.3")
        #expect(missing.code == .missingFeatures)
        #expect(missing.missingFeatures == ["HTTP2"])
        #expect(missing.curlCode == nil)
        #expect(missing.description == "libcurl 1.2.3 lacks HTTP2, which CurlTransport needs")
        let codes: [CurlTransport.Error.Code] = [
            .missingFeatures, .optionRefused, .transferFailed, .engineFailed, .shutdown,
        ]
        #expect(
            codes.map(\.description) == [
                "missing_features", "option_refused", "transfer_failed", "engine_failed", "shutdown",
            ]
        )
        #expect(Set(codes).count == codes.count)
    }
}
