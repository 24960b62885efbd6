import Foundation
import NetworkAgent
import NetworkAgentTestServer
import Testing

@testable import NetworkAgentCurl

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `CurlTransport` over the wire against the loopback server: methods, headers, bodies, connections, failures.
@Suite struct CurlTransportTests {
    let transport = CurlTransport()

    @Test func getReturnsStatusHeadersAndBody() async throws {
        let server = try LoopbackServer { request in
            .text("hello \(request.path)", status: 201, headers: [("X-Trace", "t1")])
        }
        let (text, response) = try await transport.text(request(server, "/world"))
        #expect(text == "hello /world")
        #expect(response.statusCode == 201)
        #expect(response.value(forHTTPHeaderField: "x-trace") == "t1")
        #expect(response.url == server.baseURL.appending(path: "/world"))
        let sent = try #require(server.requests.first)
        #expect(sent.method == "GET")
        #expect(sent.body.isEmpty && sent.header("Content-Length") == nil && !sent.isChunked)
    }

    @Test(arguments: ["POST", "PUT", "PATCH", "DELETE"])
    func methodsWithABodySendIt(method: String) async throws {
        let server = try LoopbackServer { request in .text("\(request.method) \(request.bodyText)") }
        let (text, _) = try await transport.text(request(server, "/m", method: method, body: Data("payload".utf8)))
        #expect(text == "\(method) payload")
        let sent = try #require(server.requests.first)
        #expect(sent.header("Content-Length") == "7")
        #expect(sent.header("Expect") == nil)
        #expect(sent.header("Content-Type") == nil)
    }

    @Test func aPostWithoutABodySendsAZeroLength() async throws {
        let server = try LoopbackServer { request in .text("\(request.method) \(request.body.count)") }
        let (text, _) = try await transport.text(request(server, "/m", method: "POST"))
        #expect(text == "POST 0")
        #expect(server.requests.first?.header("Content-Length") == "0")
    }

    @Test func deleteWithoutABodyWorks() async throws {
        let server = try LoopbackServer { request in .text(request.method) }
        let (text, _) = try await transport.text(request(server, "/m", method: "DELETE"))
        #expect(text == "DELETE")
    }

    @Test func headGetsTheHeadersAndNoBody() async throws {
        let server = try LoopbackServer { request in
            .text("a body HEAD never gets", headers: [("X-Method", request.method)])
        }
        let (text, response) = try await transport.text(request(server, "/h", method: "HEAD"))
        #expect(text.isEmpty)
        #expect(response.value(forHTTPHeaderField: "X-Method") == "HEAD")
        #expect(response.value(forHTTPHeaderField: "Content-Length") == "22")
    }

    @Test func aGetNeverSendsABody() async throws {
        let server = try LoopbackServer { request in .text("\(request.body.count)") }
        let (text, _) = try await transport.text(request(server, "/g", body: Data("ignored".utf8)))
        #expect(text == "0")
        #expect(server.requests.first?.header("Content-Length") == nil)
    }

    @Test func requestHeadersGoOutAsSetWithoutLibcurlExtras() async throws {
        let server = try LoopbackServer { _ in .text("ok") }
        var sent = request(server, "/h", headers: ["X-One": "1", "Accept": "application/json"])
        sent.sensitiveHeaderNames = ["x-one"]
        _ = try await transport.send(sent)
        let received = try #require(server.requests.first)
        #expect(received.header("X-One") == "1")
        #expect(received.header("Accept") == "application/json")
        #expect(received.header("Accept-Encoding") == nil)
        #expect(received.header("NetworkAgent-Sensitive-Headers") == nil)
        #expect(received.header("User-Agent")?.hasPrefix("NetworkAgentCurl libcurl/") == true)
        _ = try await transport.send(request(server, "/ua", headers: ["User-Agent": "Mine/1"]))
        #expect(server.requests.last?.headerValues("User-Agent") == ["Mine/1"])
    }

    @Test func duplicateResponseHeadersMergeAsURLSessionDoes() async throws {
        let server = try LoopbackServer { _ in
            .text("ok", headers: [("Set-Cookie", "a=1"), ("X-Dup", "one"), ("set-cookie", "b=2"), ("X-Dup", "two")])
        }
        let (_, response) = try await transport.text(request(server, "/d"))
        #expect(response.value(forHTTPHeaderField: "Set-Cookie") == "a=1, b=2")
        #expect(response.value(forHTTPHeaderField: "x-dup") == "one, two")
    }

    @Test func gzipBodiesArriveAsSent() async throws {
        // Any bytes do: the point is that they come back unchanged, with the headers the server sent.
        let compressed = Data([0x1F, 0x8B, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03, 0x01, 0x02, 0x03])
        let server = try LoopbackServer { _ in
            ServerResponse(headers: [("Content-Encoding", "gzip")], body: .data(compressed))
        }
        let (data, response) = try await transport.send(request(server, "/z"))
        #expect(data == compressed)
        #expect((response as? HTTPURLResponse)?.value(forHTTPHeaderField: "Content-Encoding") == "gzip")
        #expect(server.requests.first?.header("Accept-Encoding") == nil)
    }

    @Test func sequentialRequestsReuseOneConnection() async throws {
        let server = try LoopbackServer { request in .text(request.path) }
        for index in 0..<20 {
            let (text, _) = try await transport.text(request(server, "/\(index)"))
            #expect(text == "/\(index)")
        }
        #expect(server.connectionCount == 1)
        #expect(Set(server.requests.map(\.connectionID)).count == 1)
    }

    @Test func sixtyFourConcurrentRequestsAllComeBack() async throws {
        let server = try LoopbackServer { request in .text(request.path) }
        let texts = try await withThrowingTaskGroup(of: (Int, String).self) { group in
            for index in 0..<64 {
                group.addTask { (index, try await transport.text(request(server, "/\(index)")).0) }
            }
            var texts: [Int: String] = [:]
            for try await (index, text) in group { texts[index] = text }
            return texts
        }
        #expect(texts.count == 64)
        #expect(texts.allSatisfy { $0.value == "/\($0.key)" })
        #expect(server.connectionCount <= CurlTransport.Configuration.defaultMaximumConnectionsPerHost)
    }

    @Test func aFileBodyGoesOutWithItsLength() async throws {
        let content = Data((0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        let file = try temporaryFile(content)
        defer { try? FileManager.default.removeItem(at: file) }
        let server = try LoopbackServer { request in .text("\(request.body.count)") }
        var upload = request(server, "/f", method: "PUT")
        upload.httpBodyStream = FileBackedBodyStream(fileURL: file)
        let (text, _) = try await transport.text(upload)
        #expect(text == "300000")
        let received = try #require(server.requests.first)
        #expect(!received.isChunked)
        #expect(received.header("Content-Length") == "300000")
        #expect(received.body == content)
    }

    @Test func aStreamBodyGoesOutChunked() async throws {
        let content = Data((0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 13) })
        let server = try LoopbackServer { request in .text("\(request.body.count)") }
        var upload = request(server, "/s", method: "POST")
        upload.httpBodyStream = InputStream(data: content)
        let (text, _) = try await transport.text(upload)
        #expect(text == "200000")
        let received = try #require(server.requests.first)
        #expect(received.isChunked)
        #expect(received.body == content)
        #expect(received.header("Expect") == nil)
    }

    @Test func aRefusedConnectionIsCannotConnectToHost() async throws {
        let server = try LoopbackServer { _ in .text("ok") }
        let closed = request(server, "/")
        server.stop()
        let error = await networkError { _ = try await transport.send(closed) }
        #expect(error?.code == .transport)
        #expect(error?.urlErrorCode == .cannotConnectToHost)
    }

    @Test func anUnknownHostIsCannotFindHost() async throws {
        var lookup = URLRequest(url: URL(string: "http://no-such-host.invalid/")!)
        lookup.timeoutInterval = 10
        let error = await networkError { _ = try await transport.send(lookup) }
        #expect(error?.code == .transport)
        #expect(error?.urlErrorCode == .cannotFindHost)
    }

    @Test func aNonHTTPURLIsUnsupported() async throws {
        let error = await networkError { _ = try await transport.send(URLRequest(url: URL(string: "ftp://x/")!)) }
        #expect(error?.urlErrorCode == .unsupportedURL)
    }

    @Test func subSecondDeadlinesWork() async throws {
        let server = try LoopbackServer { request in
            request.path == "/slow" ? ServerResponse(status: 200, delay: .seconds(5)) : .text("fast")
        }
        let (fast, _) = try await transport.text(request(server, "/fast", timeout: 0.9))
        #expect(fast == "fast")
        let started = ContinuousClock.now
        let error = await networkError { _ = try await transport.send(request(server, "/slow", timeout: 0.3)) }
        let elapsed = started.duration(to: .now)
        #expect(error?.code == .timedOut)
        // The 0.3 s deadline itself, not one rounded to whole seconds (1 s, or the 2 s of an idle timeout kept past
        // it) nor the server's 5 s: never before the deadline, and well before a second even on a loaded machine.
        #expect(elapsed >= .milliseconds(250), "timed out after \(elapsed), before the 0.3 s deadline")
        #expect(elapsed < .milliseconds(1500), "timed out after \(elapsed) for a 0.3 s deadline")
    }

    @Test func theDeadlineCoversTheWholeBody() async throws {
        let chunks = Array(repeating: Data("x".utf8), count: 20)
        let server = try LoopbackServer { _ in ServerResponse(body: .chunked(chunks, interval: .milliseconds(150))) }
        let error = await networkError { _ = try await transport.send(request(server, "/trickle", timeout: 1)) }
        #expect(error?.code == .timedOut)
    }

    @Test func cancellingTheTaskCancelsTheTransferAndClosesItsConnection() async throws {
        let server = try LoopbackServer { _ in ServerResponse(fault: .stall) }
        let call = Task { try await transport.send(request(server, "/stall", timeout: 30)) }
        #expect(await eventually { server.requestCount == 1 })
        call.cancel()
        let result = await call.result
        guard case .failure(let error as NetworkAgentError) = result else {
            Issue.record("expected a cancellation, got \(result)")
            return
        }
        #expect(error.code == .cancelled)
        #expect(await eventually(within: .seconds(2)) { server.openConnectionCount == 0 })
    }

    @Test func anAlreadyCancelledTaskSendsNothing() async throws {
        let server = try LoopbackServer { _ in .text("hi") }
        let call = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await transport.send(request(server, "/x"))
        }
        let result = await call.result
        guard case .failure(let error as NetworkAgentError) = result else {
            Issue.record("expected a cancellation, got \(result)")
            return
        }
        #expect(error.code == .cancelled)
        #expect(server.requestCount == 0)
    }

    @Test(.timeLimit(.minutes(1)))
    func cancellationRacingTheStartNeverLosesTheCall() async throws {
        let server = try LoopbackServer { _ in .text("hi") }
        for round in 0..<200 {
            let call = Task { try await transport.send(request(server, "/\(round)")) }
            if round % 2 == 0 { await Task.yield() }
            call.cancel()
            _ = await call.result
        }
        let (text, _) = try await transport.text(request(server, "/after"))
        #expect(text == "hi")
    }

    @Test func aResetMidBodyIsAConnectionLoss() async throws {
        let server = try LoopbackServer { _ in
            ServerResponse(body: .data(Data(repeating: 1, count: 100_000)), fault: .resetMidBody(afterBytes: 10))
        }
        let error = await networkError { _ = try await transport.send(request(server, "/r")) }
        #expect(error?.code == .transport)
        #expect(error?.urlErrorCode == .networkConnectionLost)
    }

    /// A collected body gets room for the length its head gives: a body of many writes arrives whole, and a length
    /// the server got wrong (50 GB, then 100 bytes and the connection closed) fails as a lost connection without the
    /// transport reserving what it said.
    @Test func aBodyIsCollectedWholeWhateverItsContentLengthSays() async throws {
        let large = Data((0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        let server = try LoopbackServer { request in
            guard request.path == "/lies" else { return ServerResponse(body: .data(large)) }
            return ServerResponse(
                headers: [("Content-Length", "50000000000"), ("Connection", "close")],
                body: .data(Data(repeating: 7, count: 100))
            )
        }
        let (data, _) = try await transport.send(request(server, "/large"))
        #expect(data == large)
        let error = await networkError { _ = try await transport.send(request(server, "/lies")) }
        #expect(error?.code == .transport)
        #expect(error?.urlErrorCode == .networkConnectionLost, "\(String(describing: error))")
        let limited = NetworkAgent(transport: transport, configuration: .init(maximumResponseBytes: 1000))
        let tooLarge = await networkError { _ = try await limited.request(CurlTestEndpoint(baseURL: server.baseURL)) }
        #expect(tooLarge?.code == .responseTooLarge)
    }

    @Test func noCookieEngineByDefaultAndOneOnRequest() async throws {
        let server = try LoopbackServer { request in
            request.path == "/set" ? .text("set", headers: [("Set-Cookie", "sid=abc; Path=/")]) : .text("check")
        }
        _ = try await transport.send(request(server, "/set"))
        _ = try await transport.send(request(server, "/check"))
        #expect(server.requests.last?.header("Cookie") == nil)
        let keeping = CurlTransport(configuration: .init(cookies: .inMemory))
        _ = try await keeping.send(request(server, "/set"))
        _ = try await keeping.send(request(server, "/check"))
        #expect(server.requests.last?.header("Cookie") == "sid=abc")
    }

    @Test func aMissingFeatureIsNamedInATypedError() {
        let error = CurlRuntime.check(features: 0, version: "1.2.3")
        #expect(error?.missingFeatures == ["SSL", "HTTP2", "AsynchDNS"])
        #expect(error?.description.contains("libcurl 1.2.3 lacks SSL, HTTP2, AsynchDNS") == true)
        #expect(CurlRuntime.availability == nil)
    }
}
