import CCurl
import Foundation
import NetworkAgent
import NetworkAgentTestServer
import Testing

@testable import NetworkAgentCurl

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// An easy handle that served a plain GET keeps its options for the next plain GET, which sets only what differs
/// (URL, header list, timeout); any other transfer starts from a reset handle. The transfers here run one after
/// another on one transport, so each takes the handle the last one gave back.
@Suite struct CurlHandleReuseTests {
    /// What the server saw: the method, path, `X-` fields, `Content-Length` and body.
    private static func echo(_ request: ServerRequest) -> ServerResponse {
        let fields = request.headers
            .filter { $0.name.lowercased().hasPrefix("x-") }
            .map { "\($0.name)=\($0.value)" }
            .sorted()
            .joined(separator: ",")
        let length = request.headers.first { $0.name.lowercased() == "content-length" }?.value ?? "-"
        let delay: Duration = request.path == "/slow" ? .milliseconds(500) : .zero
        return ServerResponse(
            headers: [("Content-Type", "text/plain")],
            body: .data(Data("\(request.method) \(request.path) [\(fields)] \(length) \(request.bodyText)".utf8)),
            delay: delay
        )
    }

    @Test func eachTransferOnAReusedHandleSendsItsOwnRequest() async throws {
        let server = try LoopbackServer { Self.echo($0) }
        // Counts the full set-ups: CURLOPT_SSL_VERIFYPEER is set by every one and by no reuse.
        let fullSetUps = Locked(0)
        var hooks = CurlEngine.Hooks()
        hooks.optionResult = { option in
            if option == CURLOPT_SSL_VERIFYPEER { fullSetUps.withLock { $0 += 1 } }
            return nil
        }
        let transport = CurlTransport(configuration: .init(), hooks: hooks)

        var (text, _) = try await transport.text(request(server, "/a", headers: ["X-A": "1"]))
        #expect(text == "GET /a [X-A=1] - ")
        // Reused: the header list is this request's alone, an empty value included.
        (text, _) = try await transport.text(request(server, "/b", headers: ["X-B": "2", "X-Empty": ""]))
        #expect(text == "GET /b [X-B=2,X-Empty=] - ")
        #expect(fullSetUps.withLock { $0 } == 1)

        // Another kind of transfer resets the handle, and the next plain GET is set up in full.
        (text, _) = try await transport.text(request(server, "/c", method: "POST", body: Data("hi".utf8)))
        #expect(text == "POST /c [] 2 hi")
        (text, _) = try await transport.text(request(server, "/d"))
        #expect(text == "GET /d [] - ")
        let (head, response) = try await transport.send(request(server, "/e", method: "HEAD"))
        #expect(head.isEmpty && (response as? HTTPURLResponse)?.statusCode == 200)
        // Set up in full with a deadline of 0.3 s; the reused handle then takes the next request's 5 s for an answer
        // that comes after 0.5 s.
        (text, _) = try await transport.text(request(server, "/f", timeout: 0.3))
        #expect(text == "GET /f [] - ")
        // POST, GET, HEAD and GET: four more.
        #expect(fullSetUps.withLock { $0 } == 5)
        (text, _) = try await transport.text(request(server, "/slow", timeout: 5))
        #expect(text == "GET /slow [] - ")
        #expect(fullSetUps.withLock { $0 } == 5)

        // A stream is not plain: set up in full, and the GET after it too.
        let stream = try await transport.stream(request(server, "/h"))
        var streamed = Data()
        for try await chunk in stream.body { streamed.append(chunk) }
        #expect(String(decoding: streamed, as: UTF8.self) == "GET /h [] - ")
        (text, _) = try await transport.text(request(server, "/i"))
        #expect(text == "GET /i [] - ")
        #expect(fullSetUps.withLock { $0 } == 7)
        await transport.shutdown()
    }
}
