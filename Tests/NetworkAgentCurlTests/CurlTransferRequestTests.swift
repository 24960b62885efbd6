import CCurl
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

    /// The header list handed to libcurl, made in one allocation: every line of the request as `Name: value` (or
    /// `Name;` for an empty value), the sensitive-header mark left out, `Expect:` and the default `User-Agent`
    /// unless the request sets them.
    @Test func theHeaderListHoldsEveryLineOnce() throws {
        func lines(_ fields: [String: String]) -> [String] {
            var lines: [String] = []
            var node = CurlTransfer.makeHeaderList(fields)
            let first = node
            while let current = node {
                lines.append(String(cString: current.pointee.data))
                node = current.pointee.next
            }
            first.map { UnsafeMutableRawPointer($0).deallocate() }
            return lines
        }
        let fields = [
            "Accept": "application/json", "X-Empty": "", "X-Ünicode": "café ☕",
            "NetworkAgent-Sensitive-Headers": "accept",
        ]
        #expect(
            lines(fields).sorted()
                == [
                    "Accept: application/json", "Expect:", CurlOptions.defaultUserAgentLine, "X-Empty;",
                    "X-Ünicode: café ☕",
                ].sorted()
        )
        #expect(
            lines(["user-agent": "Mine/1", "EXPECT": "100-continue"]).sorted() == [
                "EXPECT: 100-continue", "user-agent: Mine/1",
            ]
        )
        #expect(lines([:]) == ["Expect:", CurlOptions.defaultUserAgentLine])
    }
}
