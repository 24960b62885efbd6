import Foundation
import NetworkAgent
import NetworkAgentCurl
import NetworkAgentTestServer
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Redirects stay the agent's: libcurl follows none, the shared policy decides each hop.
@Suite struct CurlRedirectTests {
    let transport = CurlTransport()

    @Test(arguments: [307, 308])
    func aRedirectKeepsMethodAndBody(status: Int) async throws {
        let server = try LoopbackServer { request in
            if request.path == "/old" { return ServerResponse(status: status, headers: [("Location", "/new")]) }
            return .text("\(request.method) \(request.bodyText)")
        }
        let (text, response) = try await transport.text(
            request(server, "/old", method: "POST", body: Data("payload".utf8))
        )
        #expect(text == "POST payload")
        #expect(response.url?.path == "/new")
        #expect(server.requests.map(\.path) == ["/old", "/new"])
        // The redirect's connection is kept: both hops on one.
        #expect(server.connectionCount == 1)
    }

    @Test(arguments: [307, 308])
    func aRedirectSendsAFileBodyAgainWithItsLength(status: Int) async throws {
        let content = Data((0..<150_000).map { UInt8(truncatingIfNeeded: $0) })
        let file = try temporaryFile(content)
        defer { try? FileManager.default.removeItem(at: file) }
        let server = try LoopbackServer { request in
            if request.path == "/old" { return ServerResponse(status: status, headers: [("Location", "/new")]) }
            return .text("\(request.body.count)")
        }
        var upload = request(server, "/old", method: "PUT")
        upload.httpBodyStream = FileBackedBodyStream(fileURL: file)
        let (text, _) = try await transport.text(upload)
        #expect(text == "150000")
        #expect(server.requests.count == 2)
        for received in server.requests {
            #expect(received.body == content)
            #expect(received.header("Content-Length") == "150000")
        }
    }

    @Test func a307WithAOneShotStreamBodyFailsTyped() async throws {
        let server = try LoopbackServer { _ in ServerResponse(status: 307, headers: [("Location", "/new")]) }
        var upload = request(server, "/old", method: "POST")
        upload.httpBodyStream = InputStream(data: Data("once".utf8))
        let error = await networkError { _ = try await transport.send(upload) }
        #expect(error?.code == .redirectFailed)
    }

    @Test(arguments: [(301, "POST", "GET"), (302, "POST", "GET"), (303, "PUT", "GET"), (302, "PUT", "PUT")])
    func methodsAreRewrittenAsBrowsersDo(status: Int, method: String, expected: String) async throws {
        let server = try LoopbackServer { request in
            if request.path == "/old" { return ServerResponse(status: status, headers: [("Location", "/new")]) }
            return .text("\(request.method) \(request.body.count)")
        }
        let (text, _) = try await transport.text(request(server, "/old", method: method, body: Data("x".utf8)))
        #expect(text == (expected == "GET" ? "GET 0" : "\(expected) 1"))
    }

    @Test func credentialsNeverCrossToAnotherOrigin() async throws {
        let other = try LoopbackServer { _ in .text("other") }
        let origin = try LoopbackServer { request in
            switch request.path {
            case "/away": ServerResponse(status: 302, headers: [("Location", other.baseURL.absoluteString + "/in")])
            case "/near": ServerResponse(status: 307, headers: [("Location", "/in")])
            default: .text("home")
            }
        }
        var secrets = request(origin, "/away", headers: ["Authorization": "Bearer s", "Cookie": "a=1", "X-Key": "k"])
        secrets.sensitiveHeaderNames = ["x-key"]
        _ = try await transport.send(secrets)
        let landed = try #require(other.requests.first)
        #expect(landed.header("Authorization") == nil)
        #expect(landed.header("Cookie") == nil)
        #expect(landed.header("X-Key") == nil)
        secrets.url = origin.baseURL.appending(path: "/near")
        _ = try await transport.send(secrets)
        let near = try #require(origin.requests.last)
        #expect(near.path == "/in")
        #expect(near.header("Authorization") == "Bearer s")
        #expect(near.header("X-Key") == "k")
        #expect(near.header("NetworkAgent-Sensitive-Headers") == nil)
    }

    /// The mark stays on the request the transport works with (it is left out of libcurl's header list, not
    /// removed from the request), so every hop still knows which headers to drop when it leaves the origin.
    @Test(arguments: ["NetworkAgent-Sensitive-Headers", "networkagent-sensitive-headers"])
    func theSensitiveMarkIsSentOnNoHop(spelling: String) async throws {
        let other = try LoopbackServer { _ in .text("other") }
        let origin = try LoopbackServer { request in
            switch request.path {
            case "/first": ServerResponse(status: 307, headers: [("Location", "/second")])
            case "/second": ServerResponse(status: 302, headers: [("Location", other.baseURL.absoluteString + "/end")])
            default: .text("home")
            }
        }
        let marked = request(origin, "/first", headers: [spelling: "x-key", "X-Key": "k", "X-Plain": "p"])
        let (text, _) = try await transport.text(marked)
        #expect(text == "other")
        let hops = origin.requests + other.requests
        #expect(hops.map(\.path) == ["/first", "/second", "/end"])
        for hop in hops { #expect(hop.header("NetworkAgent-Sensitive-Headers") == nil, "sent on \(hop.path)") }
        #expect(hops.map { $0.header("X-Key") } == ["k", "k", nil])
        #expect(hops.map { $0.header("X-Plain") } == ["p", "p", "p"])
    }

    @Test func redirectLoopsEndWithATypedError() async throws {
        let server = try LoopbackServer { _ in ServerResponse(status: 302, headers: [("Location", "/again")]) }
        let error = await networkError { _ = try await transport.send(request(server, "/again")) }
        #expect(error?.code == .redirectFailed)
        #expect(server.requestCount == CurlTransport.Configuration().maximumRedirects + 1)
    }

    @Test func zeroRedirectsReturnsThe3xx() async throws {
        let server = try LoopbackServer { _ in ServerResponse(status: 302, headers: [("Location", "/again")]) }
        let (_, response) = try await CurlTransport(configuration: .init(maximumRedirects: 0)).text(
            request(server, "/x")
        )
        #expect(response.statusCode == 302)
    }

    @Test func aStreamedRequestFollowsRedirectsToo() async throws {
        let server = try LoopbackServer { request in
            if request.path == "/old" { return ServerResponse(status: 303, headers: [("Location", "/new")]) }
            return .text("streamed \(request.method)")
        }
        let opened = try await transport.stream(request(server, "/old", method: "POST", body: Data("x".utf8)))
        var body = Data()
        for try await chunk in opened.body { body.append(chunk) }
        #expect(String(decoding: body, as: UTF8.self) == "streamed GET")
        #expect(opened.response.url?.path == "/new")
    }
}
