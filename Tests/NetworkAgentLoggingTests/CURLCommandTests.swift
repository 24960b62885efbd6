import Foundation
import NetworkAgent
import NetworkAgentLogging
import NetworkAgentTestServer
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// cURL commands: quoting, bodies, redaction, and (where curl is installed) that they reproduce the request.
@Suite struct CURLCommandTests {
    func request(
        _ url: String = "http://example.com/a?b=1",
        method: String = "GET",
        headers: [String: String] = [:],
        body: Data? = nil
    ) throws -> URLRequest {
        var request = URLRequest(url: try #require(URL(string: url)))
        request.httpMethod = method
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        request.httpBody = body
        return request
    }

    @Test func aPlainGetIsJustTheURL() throws {
        #expect(curlCommand(for: try request()) == "curl 'http://example.com/a?b=1'")
    }

    @Test func headIsHeadAndOtherMethodsAreExplicit() throws {
        #expect(curlCommand(for: try request(method: "HEAD")) == "curl 'http://example.com/a?b=1' \\\n  --head")
        #expect(curlCommand(for: try request(method: "DELETE")) == "curl 'http://example.com/a?b=1' \\\n  -X 'DELETE'")
    }

    @Test func singleQuotesNewlinesAndShellCharactersAreQuoted() throws {
        let body = Data("it's $HOME `id`\nline two \\ end".utf8)
        let command = curlCommand(
            for: try request(method: "POST", headers: ["X-Note": "it's", "Content-Type": "text/plain"], body: body)
        )
        #expect(
            command == """
                curl 'http://example.com/a?b=1' \\
                  -X 'POST' \\
                  -H 'Content-Type: text/plain' \\
                  -H 'X-Note: it'\\''s' \\
                  --data-raw 'it'\\''s $HOME `id`
                line two \\ end'
                """
        )
    }

    @Test func binaryBodiesAreReferencedAsAFile() throws {
        let body = Data([0x00, 0xff, 0x10, 0x80])
        let command = curlCommand(for: try request(method: "PUT", body: body))
        #expect(command.hasSuffix("\\\n  --data-binary '@body.bin'"))
        let named = curlCommand(for: try request(method: "PUT", body: body), bodyFileName: "it's.bin")
        #expect(named.hasSuffix("--data-binary '@it'\\''s.bin'"))
    }

    @Test func streamedBodiesAreReferencedAsAFile() throws {
        var streamed = try request(method: "POST")
        streamed.httpBodyStream = InputStream(data: Data("x".utf8))
        #expect(curlCommand(for: streamed).hasSuffix("--data-binary '@body.bin'"))
    }

    @Test func secretsAreRedactedByDefaultAndShownWhenAsked() throws {
        let secret = try request(
            "https://u:pw@example.com/a?Access_Token=t1&q=x",
            method: "POST",
            headers: ["Authorization": "Bearer t2", "Content-Type": "application/json"],
            body: Data(#"{"password":"t3","n":1}"#.utf8)
        )
        let redacted = curlCommand(for: secret)
        #expect(
            redacted == """
                curl 'https://u:<redacted>@example.com/a?Access_Token=<redacted>&q=x' \\
                  -X 'POST' \\
                  -H 'Authorization: <redacted>' \\
                  -H 'Content-Type: application/json' \\
                  --data-raw '{"n":1,"password":"<redacted>"}'
                """
        )
        let clear = curlCommand(for: secret, redaction: nil)
        #expect(clear.contains("'https://u:pw@example.com/a?Access_Token=t1&q=x'"))
        #expect(clear.contains("-H 'Authorization: Bearer t2'"))
        #expect(clear.contains(#"--data-raw '{"password":"t3","n":1}'"#))
    }

    static let curlPath = ["/usr/bin/curl", "/usr/local/bin/curl", "/bin/curl"].first {
        FileManager.default.isExecutableFile(atPath: $0)
    }

    @Test(.enabled(if: curlPath != nil, "needs the curl executable"))
    func theCommandReproducesTheRequest() async throws {
        let server = try LoopbackServer { _ in .text("") }
        let body = "it's a \"body\"\nwith $(no) expansion \\ and 'quotes'"
        let url = server.baseURL.absoluteString + "/p?x=a%20b"
        let request = try request(
            url,
            method: "POST",
            headers: ["Content-Type": "text/plain", "X-Quote": "it's \"here\" $HOME"],
            body: Data(body.utf8)
        )
        let result = try await ChildProcess.run(
            "/bin/sh",
            ["-c", curlCommand(for: request, redaction: nil) + " --silent --output /dev/null"]
        )
        #expect(result.status == 0)
        let received = try #require(server.requests.first)
        #expect(received.method == "POST")
        #expect(received.target == "/p?x=a%20b")
        #expect(received.header("X-Quote") == "it's \"here\" $HOME")
        #expect(received.bodyText == body)
    }

    @Test(.enabled(if: curlPath != nil, "needs the curl executable"))
    func aBinaryBodyIsSentFromTheFile() async throws {
        let server = try LoopbackServer { _ in .text("") }
        let body = Data([0x00, 0x01, 0xfe, 0xff, 0x0a, 0x27])
        let request = try request(server.baseURL.absoluteString + "/b", method: "PUT", body: body)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("curl-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try body.write(to: directory.appendingPathComponent("body.bin"))
        let result = try await ChildProcess.run(
            "/bin/sh",
            ["-c", "cd '\(directory.path)' && " + curlCommand(for: request) + " --silent --output /dev/null"]
        )
        #expect(result.status == 0)
        #expect(server.requests.first?.body == body)
    }
}
