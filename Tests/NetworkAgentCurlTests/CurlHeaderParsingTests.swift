import Foundation
import NetworkAgentTestServer
import Testing

@testable import NetworkAgentCurl

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The response head as libcurl hands it over, one line per header callback, parsed on the bytes.
@Suite struct CurlHeaderParsingTests {
    private func transfer() throws -> CurlTransfer {
        let url = try #require(URL(string: "http://example.test/h"))
        let transfer = CurlTransfer.plainGET(url)
        // On libcurl, waiting for its head: header lines are read only then.
        transfer.state = .running(.flowing, .awaitingHead(.collect))
        return transfer
    }

    private func feed(_ lines: [String], to transfer: CurlTransfer) {
        for line in lines {
            Array(line.utf8).withUnsafeBytes { transfer.receiveHeader($0) }
        }
    }

    @Test func fieldsAreTrimmedOfSpacesAndTabsAndMergedCaseInsensitively() throws {
        let transfer = try transfer()
        feed(
            [
                "HTTP/1.1 100 Continue\r\n", "X-Interim: gone\r\n", "\r\n",
                "HTTP/1.1 201 Created\r\n", "Content-Type:\t text/plain ; charset=utf-8 \t\r\n",
                "X-Dup: one\r\n", "x-dup:two\r\n", "X-Empty:   \r\n", "X-Folded: first\r\n", " \tsecond  \r\n",
                "NoColonHere\r\n", "X-Colon: a:b: c\r\n", "\r\n", "X-Trailer: ignored\r\n", "\r\n",
            ],
            to: transfer
        )
        #expect(transfer.state == .running(.flowing, .collecting(streamed: false)), "the head ended")
        let response = try #require(transfer.head(timings: nil).makeResponse())
        #expect(response.statusCode == 201)
        #expect(response.value(forHTTPHeaderField: "content-type") == "text/plain ; charset=utf-8")
        #expect(response.value(forHTTPHeaderField: "X-DUP") == "one, two")
        #expect(response.value(forHTTPHeaderField: "X-Empty") == "")
        #expect(response.value(forHTTPHeaderField: "X-Folded") == "first second")
        #expect(response.value(forHTTPHeaderField: "X-Colon") == "a:b: c")
        #expect(response.value(forHTTPHeaderField: "X-Interim") == nil)
        #expect(response.value(forHTTPHeaderField: "X-Trailer") == nil)
        #expect(response.allHeaderFields.count == 5)
    }

    @Test func statusLinesOfEachVersionParse() throws {
        let cases: [(String, Int, String)] = [
            ("HTTP/2 200\r\n", 200, "HTTP/2"), ("HTTP/1.1 404 Not Found\r\n", 404, "HTTP/1.1"),
            ("HTTP/1.0  302  Found\n", 302, "HTTP/1.0"), ("HTTP/1.1 2x0 Odd\r\n", 0, "HTTP/1.1"),
            ("HTTP/1.1\r\n", 0, "HTTP/1.1"),
        ]
        for (line, status, version) in cases {
            let transfer = try transfer()
            feed([line], to: transfer)
            #expect(transfer.statusCode == status, "\(line)")
            #expect(transfer.httpVersion == version, "\(line)")
        }
    }

    @Test func repeatedFieldsMergeUnderTheirFirstSpellingAsWithLowercasedNames() {
        let fields: [(name: String, value: String)] = [
            ("Set-Cookie", "a=1"), ("X-Dup", "one"), ("set-cookie", "b=2"), ("X-DUP", "two"), ("ETag", "\"e\""),
            ("Émoji-X", "1"), ("émoji-x", "2"), ("Content-Length", "5"), ("x-dup", "three"), ("Set-Cookiex", "c"),
        ]
        // The reference: the merge by lowercased names the transport made before (and makes past 32 fields).
        var expected: [String: String] = [:]
        var spelling: [String: String] = [:]
        for (name, value) in fields {
            if let first = spelling[name.lowercased()] {
                expected[first] = (expected[first] ?? "") + ", " + value
            } else {
                spelling[name.lowercased()] = name
                expected[name] = value
            }
        }
        #expect(CurlTransfer.merged(fields) == expected)
        #expect(expected["X-Dup"] == "one, two, three" && expected["Émoji-X"] == "1, 2")
        let many = (0..<40).map { (name: "X-F\($0 % 20)", value: "\($0)") }
        #expect(CurlTransfer.merged(many)["X-F3"] == "3, 23")
    }

    /// A head far larger than the room made for its fields (40 fields, one line near libcurl's 100 KiB limit for a
    /// line) arrives whole over the wire, and the next response on the reused connection and handle has only its own.
    @Test func aHeadLargerThanItsRoomArrivesWholeAndLeavesNothingBehind() async throws {
        let big = String(repeating: "v", count: 100_000)
        let server = try LoopbackServer { request in
            guard request.path == "/big" else { return .text("small") }
            let fields = (0..<40).map { (name: "X-Field-\($0 % 30)", value: "value \($0)") }
            return ServerResponse(headers: fields + [("X-Big", big)], body: .data(Data("big".utf8)))
        }
        let transport = CurlTransport()
        let (body, response) = try await transport.text(request(server, "/big"))
        #expect(body == "big")
        #expect(response.value(forHTTPHeaderField: "X-Big") == big)
        #expect(response.value(forHTTPHeaderField: "x-field-5") == "value 5, value 35")
        #expect(response.value(forHTTPHeaderField: "X-Field-29") == "value 29")
        let (small, next) = try await transport.text(request(server, "/small"))
        #expect(small == "small")
        #expect(next.value(forHTTPHeaderField: "X-Big") == nil && next.value(forHTTPHeaderField: "X-Field-0") == nil)
        #expect(server.connectionCount == 1)
        await transport.shutdown()
    }
}
