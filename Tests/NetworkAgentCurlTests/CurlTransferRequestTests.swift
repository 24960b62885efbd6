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
    /// unless the request sets them; no `Expect:` for a transfer that sends no body.
    @Test func theHeaderListHoldsEveryLineOnce() throws {
        func lines(_ fields: [String: String], suppressingExpect: Bool = true) -> [String] {
            var lines: [String] = []
            var node = CurlTransfer.makeHeaderList(fields, suppressingExpect: suppressingExpect)
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
        #expect(lines([:], suppressingExpect: false) == [CurlOptions.defaultUserAgentLine])
        #expect(
            lines(["Accept": "a/b", "Expect": "100-continue"], suppressingExpect: false).sorted()
                == ["Accept: a/b", "Expect: 100-continue", CurlOptions.defaultUserAgentLine].sorted()
        )
    }

    /// Which transfers leave the `Expect:` line out: a GET or HEAD without a body; any method with one, and any
    /// other method, keep it.
    @Test func onlyABodilessGETOrHEADGoesWithoutExpect() throws {
        func hasExpectLine(method: String, body: CurlTransfer.Body) throws -> Bool {
            let url = try #require(URL(string: "http://a.test/x"))
            var request = URLRequest(url: url)
            request.httpMethod = method
            let transfer = CurlTransfer(
                request: request,
                url: url,
                body: body,
                timeoutMilliseconds: 0,
                headDeadline: nil,
                maximumResponseBytes: nil,
                progressHandler: nil
            )
            var node = transfer.slist
            while let current = node {
                if String(cString: current.pointee.data) == "Expect:" { return true }
                node = current.pointee.next
            }
            return false
        }
        #expect(try !hasExpectLine(method: "GET", body: .none))
        #expect(try !hasExpectLine(method: "HEAD", body: .none))
        #expect(try !hasExpectLine(method: "get", body: .none))
        #expect(try hasExpectLine(method: "GET", body: .data(Data("x".utf8))))
        #expect(try hasExpectLine(method: "POST", body: .none))
        #expect(try hasExpectLine(method: "PUT", body: .data(Data("x".utf8))))
        #expect(try hasExpectLine(method: "DELETE", body: .none))
    }
}
