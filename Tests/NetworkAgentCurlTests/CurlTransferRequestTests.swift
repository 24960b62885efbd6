import Foundation
import Testing

@testable import NetworkAgentCurl

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What `CurlTransfer` reads of a request on its bytes agrees with Foundation.
@Suite struct CurlTransferRequestTests {
    @Test func theHTTPSSchemeIsReadAsFoundationReadsIt() throws {
        for text in [
            "https://a.test/", "HTTPS://a.test/x", "HttpS://a", "http://a.test/", "https", "httpsx://a", "ftp://a",
        ] {
            let url = try #require(URL(string: text))
            #expect(CurlTransfer.hasHTTPSScheme(url.absoluteString) == (url.scheme?.lowercased() == "https"), "\(text)")
        }
    }
}
