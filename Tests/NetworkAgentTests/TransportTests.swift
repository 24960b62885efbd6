import Foundation
import NetworkAgentTestServer
import NetworkAgentTestSupport
import Testing

@testable import NetworkAgent

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension HTTPURLResponse {
    func header(_ name: String) -> String? { value(forHTTPHeaderField: name) }
}

/// What every transport must do, on the transport of the run (`TestTransport.kind`).
@Suite struct TransportTests {
    let transport = TestTransport.make()

    func endpoint(
        _ server: LoopbackServer,
        _ path: String,
        method: HTTPMethod = .get,
        task: HTTPTask = .requestPlain,
        headers: [String: String] = [:],
        timeout: Duration? = .seconds(10)
    ) -> TestEndpoint {
        TestEndpoint(
            baseURL: server.baseURL,
            path: path,
            method: method,
            headers: headers,
            task: task,
            timeout: timeout
        )
    }

    func send(_ endpoint: TestEndpoint) async throws -> (Data, HTTPURLResponse) {
        let (data, response) = try await NetworkAgent(transport: transport).request(endpoint)
        return (data, try #require(response as? HTTPURLResponse))
    }

    @Test func basicChallengeComesBackAsA401WithItsHeaders() async throws {
        let server = try LoopbackServer { _ in
            .text("go away", status: 401, headers: [("WWW-Authenticate", "Basic realm=\"x\""), ("X-Trace", "t1")])
        }
        let (_, response) = try await send(endpoint(server, "/private", timeout: .seconds(5)))
        #expect(response.statusCode == 401)
        #expect(response.header("www-authenticate") == "Basic realm=\"x\"")
        #expect(response.header("X-Trace") == "t1")
    }

    @Test(arguments: [307, 308])
    func redirectKeepsMethodAndBody(status: Int) async throws {
        let server = try LoopbackServer { request in
            if request.path == "/old" { return ServerResponse(status: status, headers: [("Location", "/new")]) }
            return .text("\(request.method) \(String(decoding: request.body, as: UTF8.self))")
        }
        let (data, response) = try await send(
            endpoint(server, "/old", method: .post, task: .requestWithoutAttributes(content: "payload"))
        )
        #expect(response.statusCode == 200)
        #expect(String(decoding: data, as: UTF8.self) == "POST payload")
        #expect(response.url?.path == "/new")
        #expect(server.requests.map(\.path) == ["/old", "/new"])
    }

    @Test func redirectResendsAFileBackedBody() async throws {
        let server = try LoopbackServer { request in
            if request.path == "/old" { return ServerResponse(status: 307, headers: [("Location", "/new")]) }
            return .text("\(request.body.count) \(request.header("Content-Length") ?? "chunked")")
        }
        let agent = NetworkAgent(transport: transport, configuration: .init(multipartMemoryThreshold: 1024))
        let parts = [
            HTTPMultipartTask(data: Data(repeating: 1, count: 100_000), name: "f", mimeType: "application/octet-stream")
        ]
        let (data, _) = try await agent.request(endpoint(server, "/old", method: .post, task: .upload(parts: parts)))
        let sizes = server.requests.map(\.body.count)
        #expect(sizes.count == 2 && sizes[0] == sizes[1] && sizes[0] > 100_000)
        #expect(String(decoding: data, as: UTF8.self) == "\(sizes[1]) \(sizes[1])")
    }

    @Test(arguments: [(301, "POST", "GET"), (302, "POST", "GET"), (303, "PUT", "GET"), (302, "PUT", "PUT")])
    func redirectRewritesMethodsAsBrowsersDo(status: Int, method: String, expected: String) async throws {
        let server = try LoopbackServer { request in
            if request.path == "/old" { return ServerResponse(status: status, headers: [("Location", "/new")]) }
            return .text("\(request.method) \(request.body.count)")
        }
        let (data, _) = try await send(
            endpoint(
                server,
                "/old",
                method: HTTPMethod(rawValue: method.lowercased())!,
                task: .requestWithoutAttributes(content: "x")
            )
        )
        #expect(String(decoding: data, as: UTF8.self) == (expected == "GET" ? "GET 0" : "\(expected) 1"))
    }

    @Test func credentialsNeverCrossToAnotherOrigin() async throws {
        let other = try LoopbackServer { _ in .text("other") }
        let origin = try LoopbackServer { request in
            switch request.path {
            case "/away":
                ServerResponse(status: 302, headers: [("Location", other.baseURL.absoluteString + "/landing")])
            case "/near": ServerResponse(status: 307, headers: [("Location", "/landing")])
            default: .text("home")
            }
        }
        let secrets = ["Authorization": "Bearer s3cret", "Cookie": "sid=1", "Proxy-Authorization": "Basic eDp5"]
        _ = try await send(endpoint(origin, "/away", headers: secrets))
        let landed = try #require(other.requests.first)
        #expect(landed.header("Authorization") == nil)
        #expect(landed.header("Cookie") == nil)
        #expect(landed.header("Proxy-Authorization") == nil)

        _ = try await send(endpoint(origin, "/near", headers: secrets))
        let sameOrigin = try #require(origin.requests.last)
        #expect(sameOrigin.path == "/landing")
        #expect(sameOrigin.header("Authorization") == "Bearer s3cret")
    }

    @Test func redirectLoopsEndWithATypedError() async throws {
        let server = try LoopbackServer { _ in ServerResponse(status: 302, headers: [("Location", "/again")]) }
        let error = await #expect(throws: NetworkAgentError.self) { try await send(endpoint(server, "/again")) }
        #expect(error?.code == .redirectFailed)
        #expect(server.requestCount == URLSessionTransport.defaultMaximumRedirects + 1)
    }

    @Test func subSecondDeadlinesWork() async throws {
        let server = try LoopbackServer { request in
            request.path == "/slow" ? ServerResponse(status: 200, delay: .seconds(3)) : .text("fast")
        }
        // A sub-second deadline must not be rounded down to nothing. The connection is opened first so that the
        // timed request is a keep-alive exchange of a few milliseconds; 900 ms is still sub-second and leaves room
        // for a loaded two-core machine under Thread Sanitizer.
        _ = try await send(endpoint(server, "/fast"))
        let (data, _) = try await send(endpoint(server, "/fast", timeout: .milliseconds(900)))
        #expect(String(decoding: data, as: UTF8.self) == "fast")
        let started = ContinuousClock.now
        let error = await #expect(throws: NetworkAgentError.self) {
            try await send(endpoint(server, "/slow", timeout: .milliseconds(300)))
        }
        let elapsed = started.duration(to: .now)
        #expect(error?.code == .timedOut)
        // The 300 ms deadline itself: not before it, and not the whole seconds of libcurl's idle timeout (which
        // URLSessionTransport keeps at least a second past the deadline) nor the server's 3 s.
        #expect(elapsed >= .milliseconds(250), "timed out after \(elapsed), before the 300 ms deadline")
        #expect(elapsed < .milliseconds(1500), "timed out after \(elapsed) for a 300 ms deadline")
    }

    @Test func theWholeRequestHasADeadlineNotJustIdleTime() async throws {
        let chunks = Array(repeating: Data("x".utf8), count: 20)
        let server = try LoopbackServer { _ in ServerResponse(body: .chunked(chunks, interval: .milliseconds(150))) }
        let error = await #expect(throws: NetworkAgentError.self) {
            try await send(endpoint(server, "/trickle", timeout: .seconds(1)))
        }
        #expect(error?.code == .timedOut)
    }

    @Test func cancellingTheTaskCancelsTheRequest() async throws {
        let server = try LoopbackServer { _ in ServerResponse(fault: .stall) }
        let call = Task { try await send(endpoint(server, "/stall", timeout: .seconds(30))) }
        #expect(await eventually { server.requestCount == 1 })
        call.cancel()
        let result = await call.result
        #expect(throws: NetworkAgentError.self) { try result.get() }
        if case .failure(let error as NetworkAgentError) = result { #expect(error.code == .cancelled) }
    }

    @Test func anAlreadyCancelledTaskSendsNothing() async throws {
        let server = try LoopbackServer { _ in .text("hi") }
        let call = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await send(endpoint(server, "/x"))
        }
        let result = await call.result
        if case .failure(let error as NetworkAgentError) = result {
            #expect(error.code == .cancelled)
        } else {
            Issue.record("expected a cancellation error, got \(result)")
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func cancellationRacingTheStartNeverLosesTheCall() async throws {
        let server = try LoopbackServer { _ in .text("hi") }
        let transport = TestTransport.make()
        let agent = NetworkAgent(transport: transport)
        for round in 0..<200 {
            let call = Task { try await agent.request(endpoint(server, "/\(round)")) }
            if round % 2 == 0 { await Task.yield() }
            call.cancel()
            // Either outcome is fine; what matters is that the call ends.
            _ = await call.result
        }
        // Every call ended (above); a transport that counts its transfers must also have none left.
        #expect(await eventually { (TestTransport.activeTransfers(of: transport) ?? 0) == 0 })
    }

    @Test func noCookieJarByDefault() async throws {
        let server = try LoopbackServer { request in
            request.path == "/set" ? .text("set", headers: [("Set-Cookie", "sid=abc; Path=/")]) : .text("check")
        }
        _ = try await send(endpoint(server, "/set"))
        _ = try await send(endpoint(server, "/check"))
        #expect(server.requests.last?.header("Cookie") == nil)
    }

    // URLSessionTransport's own opt-in (a session configuration with a cookie storage), so on it in every run.
    @Test func cookiesWhenTheSessionConfigurationAsksForThem() async throws {
        let server = try LoopbackServer { request in
            request.path == "/set" ? .text("set", headers: [("Set-Cookie", "sid=abc; Path=/")]) : .text("check")
        }
        let configuration = URLSessionTransport.defaultSessionConfiguration()
        let jar = HTTPCookieStorage.sharedCookieStorage(forGroupContainerIdentifier: "networkagent-tests-\(UUID())")
        configuration.httpCookieStorage = jar
        configuration.httpShouldSetCookies = true
        configuration.httpCookieAcceptPolicy = .always
        let agent = NetworkAgent(transport: URLSessionTransport(configuration: configuration))
        _ = try await agent.request(endpoint(server, "/set"))
        _ = try await agent.request(endpoint(server, "/check"))
        #expect(server.requests.last?.header("Cookie") == "sid=abc")
    }

    @Test func userAgentIsNetworkAgentsOwn() async throws {
        let server = try LoopbackServer { _ in .text("ok") }
        let agent = NetworkAgent(transport: transport, configuration: .init(appToken: "Tests/1"))
        _ = try await agent.request(endpoint(server, "/"))
        #expect(
            server.requests.first?.header("User-Agent")
                == "NetworkAgent/\(NetworkAgentConfiguration.libraryVersion) Tests/1"
        )
    }

    @Test func refusedConnectionIsATransportError() async throws {
        let server = try LoopbackServer { _ in .text("ok") }
        let closed = endpoint(server, "/")
        server.stop()
        let error = await #expect(throws: NetworkAgentError.self) { try await send(closed) }
        #expect(error?.code == .transport)
        #expect(error?.urlErrorCode == .cannotConnectToHost)
    }

    @Test func queryValuesArriveIntact() async throws {
        let server = try LoopbackServer { _ in .text("ok") }
        _ = try await send(
            endpoint(server, "/search", task: .requestAttributes(attributes: ["q": "a+b c", "n": 1], encoding: .url))
        )
        let request = try #require(server.requests.first)
        #expect(request.target == "/search?n=1&q=a%2Bb%20c")
        #expect(request.queryItems.first { $0.name == "q" }?.value == "a+b c")
    }

    @Test func largeMultipartUploadStreamsFromAFileWithContentLength() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("upload-\(UUID().uuidString).bin")
        let size = 32 << 20
        try Data(repeating: 0x5A, count: size).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let server = try LoopbackServer { request in .text("\(request.body.count)") }
        let parts = [HTTPMultipartTask(fileURL: file, name: "file", mimeType: "application/octet-stream")]
        let (data, _) = try await send(
            endpoint(server, "/upload", method: .post, task: .upload(parts: parts), timeout: .seconds(60))
        )
        let request = try #require(server.requests.first)
        #expect(!request.isChunked)
        #expect(request.header("Content-Length") == "\(request.body.count)")
        #expect(request.body.count > size)
        #expect(String(decoding: data, as: UTF8.self) == "\(request.body.count)")
        let filename = "filename=\"\(file.lastPathComponent)\""
        #expect(request.body.prefix(300).range(of: Data(filename.utf8)) != nil)
    }

    @Test func headRequestsWork() async throws {
        let server = try LoopbackServer { request in
            .text("body is not sent for HEAD", headers: [("X-Method", request.method)])
        }
        let (data, response) = try await send(endpoint(server, "/", method: .head))
        #expect(response.header("X-Method") == "HEAD")
        #expect(data.isEmpty)
    }
}
