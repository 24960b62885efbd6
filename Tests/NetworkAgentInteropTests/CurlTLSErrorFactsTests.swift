import Foundation
import NetworkAgent
import NetworkAgentCurl
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The TLS failures of NginxHTTPSTests keep libcurl's numbers as typed fields: the `CURLcode` and, for a certificate
/// that failed verification, OpenSSL's X.509 result (20: unable to get the local issuer certificate; a name mismatch
/// with libcurl 7.88 and OpenSSL 3: 1, X509_V_ERR_UNSPECIFIED).
@Suite(Interop.nginxHTTPSIsUp)
struct CurlTLSErrorFactsTests {
    let https = Interop.nginxHTTPS ?? URL(fileURLWithPath: "/")
    let testCA = Interop.testCA ?? URL(fileURLWithPath: "/")

    func facts(of base: URL, through transport: CurlTransport) async -> CurlTransport.Error? {
        do {
            _ = try await NetworkAgent(transport: transport)
                .request(PeerEndpoint(baseURL: base, path: "/plain/data.json"))
            Issue.record("\(base) answered instead of failing")
            return nil
        } catch let error as NetworkAgentError {
            #expect(error.curlError != nil, "\(error)")
            return error.curlError
        } catch {
            Issue.record("\(base) failed with \(type(of: error)): \(error)")
            return nil
        }
    }

    @Test func anUnknownRootKeepsCode60AndItsX509Result() async {
        let facts = await facts(of: https, through: CurlTransport())
        #expect(facts?.code == .transferFailed)
        #expect(facts?.curlCode == 60)
        // 20 for the chain the test CA signed; 19 or 18 would be a self-signed chain or leaf.
        #expect([18, 19, 20, 21].contains(facts?.tlsVerifyResult ?? -1), "\(String(describing: facts))")
    }

    @Test(.enabled(if: Interop.nginxHTTPSMismatch != nil, "no name-mismatch peer"))
    func aNameMismatchKeepsCode60AndAVerifiedChain() async throws {
        let base = try #require(Interop.nginxHTTPSMismatch)
        let facts = await facts(of: base, through: CurlTransport(configuration: .init(caBundle: testCA)))
        #expect(facts?.curlCode == 60)
        // Measured: 1. Whatever the backend says, it is a result, and not one of an unknown root.
        let result = try #require(facts?.tlsVerifyResult)
        #expect(![18, 19, 20, 21].contains(result), "\(result)")
    }

    @Test func aWrongPinKeepsCode90() async {
        let pin = "sha256//47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU="
        let facts = await facts(
            of: https,
            through: CurlTransport(configuration: .init(caBundle: testCA, pinnedPublicKey: pin))
        )
        #expect(facts?.curlCode == 90)
        #expect(facts?.tlsVerifyResult == nil)
    }
}
