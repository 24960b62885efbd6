import Foundation
import NetworkAgentTestServer
import NetworkAgentTestSupport
import Testing

@testable import NetworkAgent

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A reused keep-alive connection that the server closes or resets before answering (nginx closing an idle
/// connection just as the client sends on it). libcurl then sends the request again by itself on a fresh
/// connection, and FoundationNetworking cannot give it the body a second time: the server would get the headers
/// with a `Content-Length` and wait for a body that never comes. The transport must deliver the whole body at once.
///
/// Every transport must; these run on the transport of the run (`TestTransport.kind`), except the two about how
/// URLSessionTransport works around FoundationNetworking (its `body_resent` event, and a one-shot stream it refuses
/// to send twice), which name it.
@Suite struct ConnectionReuseTests {
    /// The deadline of every request here: a hang shows up as a `timedOut` after this long. Generous, because when
    /// the whole suite starts at once on a loaded 2-core machine every exchange can take 10-15 s.
    static let deadline: Duration = .seconds(30)
    /// How fast an answer must come for the test to count it as not having hung: well before the deadline, so that
    /// an answer that only came out of some other timeout shows (unloaded, the whole exchange takes 2-10 ms).
    static let quickly: Duration = .seconds(20)

    static let faults: [ServerResponse.Fault] = [.resetBeforeResponse, .closeBeforeResponse]

    /// A server that answers the first request of every connection with `METHOD <body bytes> <Content-Length or
    /// chunked>`, and meets the second request of the first connection that gets one with `fault`.
    static func server(fault: ServerResponse.Fault) throws -> LoopbackServer {
        let perConnection = Locked<[Int: Int]>([:])
        let faulted = Locked(false)
        return try LoopbackServer { request in
            let index = perConnection.withLock { counts in
                counts[request.connectionID, default: 0] += 1
                return counts[request.connectionID, default: 0]
            }
            let injectFault =
                index == 2
                && faulted.withLock { done in
                    defer { done = true }
                    return !done
                }
            if injectFault { return ServerResponse(fault: fault) }
            let framing = request.isChunked ? "chunked" : (request.header("Content-Length") ?? "none")
            return .text("\(request.method) \(request.body.count) \(framing)")
        }
    }

    /// Opens a keep-alive connection with a GET, for the next request to reuse.
    static func warmUp(_ transport: any HTTPTransport, _ server: LoopbackServer) async throws {
        var warmup = URLRequest(url: server.baseURL.appending(path: "warmup"))
        warmup.timeoutInterval = deadline.timeInterval
        let (_, opened) = try await transport.send(warmup)
        #expect((opened as? HTTPURLResponse)?.statusCode == 200)
    }

    /// Opens a keep-alive connection with a GET, then sends `request` on it; the server kills the connection
    /// instead of answering, once. Returns the answer and how long the second request took.
    static func sendOnAConnectionThatDies(
        _ request: URLRequest,
        transport: any HTTPTransport,
        server: LoopbackServer
    ) async throws -> (text: String, status: Int, elapsed: Duration) {
        try await warmUp(transport, server)
        let started = ContinuousClock.now
        let (data, response) = try await transport.send(request)
        let elapsed = started.duration(to: .now)
        let status = try #require(response as? HTTPURLResponse).statusCode
        return (String(decoding: data, as: UTF8.self), status, elapsed)
    }

    static func request(_ server: LoopbackServer, method: String, path: String = "upload") -> URLRequest {
        var request = URLRequest(url: server.baseURL.appending(path: path))
        request.httpMethod = method
        request.timeoutInterval = deadline.timeInterval
        request.setValue("application/octet-stream", forHTTPHeaderField: "Content-Type")
        return request
    }

    /// 200,000 bytes that are not all the same, so a body cut or shifted anywhere shows.
    static let body = Data((0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 8) })

    /// Checks what the server saw: the warm-up and the killed request on one connection, then the same request
    /// in full on another connection.
    static func expectSentTwiceInFull(_ server: LoopbackServer, method: String, body: Data) throws {
        let requests = server.requests
        try #require(requests.count == 3, "\(requests.map { "\($0.method) \($0.path) #\($0.connectionID)" })")
        let (warmup, killed, resent) = (requests[0], requests[1], requests[2])
        #expect(warmup.path == "/warmup")
        #expect(killed.connectionID == warmup.connectionID, "the request must go out on the reused connection")
        #expect(resent.connectionID != killed.connectionID)
        for sent in [killed, resent] {
            #expect(sent.method == method)
            #expect(sent.body == body)
            #expect(sent.header("Content-Length") == "\(body.count)")
            #expect(!sent.isChunked)
        }
    }

    @Test(arguments: faults, ["POST", "PUT", "PATCH"])
    func anInMemoryBodyIsSentInFullAgain(fault: ServerResponse.Fault, method: String) async throws {
        let server = try Self.server(fault: fault)
        defer { server.stop() }
        var request = Self.request(server, method: method)
        request.httpBody = Self.body
        let answer = try await Self.sendOnAConnectionThatDies(request, transport: TestTransport.make(), server: server)
        #expect(answer.status == 200)
        #expect(answer.text == "\(method) \(Self.body.count) \(Self.body.count)")
        #expect(answer.elapsed < Self.quickly)
        try Self.expectSentTwiceInFull(server, method: method, body: Self.body)
    }

    // URLSessionTransport's own event for its own re-send (libcurl under CurlTransport re-sends by itself).
    @Test func theTransportReportsEachResendAsAnEvent() async throws {
        let server = try Self.server(fault: .resetBeforeResponse)
        defer { server.stop() }
        var request = Self.request(server, method: "PUT")
        request.httpBody = Self.body
        let events = Locked<[NetworkAgentEvent]>([])
        let answer = try await NetworkAgentEvents.observing({ event in events.withLock { $0.append(event) } }) {
            try await Self.sendOnAConnectionThatDies(request, transport: URLSessionTransport(), server: server)
        }
        #expect(answer.status == 200)
        let resent = events.withLock { $0 }.filter { $0.name == "body_resent" }
        #expect(resent.map(\.source) == ["transport"])
        #expect(resent.map(\.attributes) == [["method": "PUT"]])
    }

    @Test(arguments: faults)
    func aFileBodyIsSentInFullAgain(fault: ServerResponse.Fault) async throws {
        let server = try Self.server(fault: fault)
        defer { server.stop() }
        let file = FileManager.default.temporaryDirectory.appending(path: "reuse-\(UUID().uuidString).bin")
        try Self.body.write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        var request = Self.request(server, method: "POST")
        request.httpBodyStream = FileBackedBodyStream(fileURL: file)
        let answer = try await Self.sendOnAConnectionThatDies(request, transport: TestTransport.make(), server: server)
        #expect(answer.status == 200)
        #expect(answer.text == "POST \(Self.body.count) \(Self.body.count)")
        #expect(answer.elapsed < Self.quickly)
        try Self.expectSentTwiceInFull(server, method: "POST", body: Self.body)
    }

    @Test(arguments: faults)
    func aStreamedResponseGetsTheBodySentAgainToo(fault: ServerResponse.Fault) async throws {
        let server = try Self.server(fault: fault)
        defer { server.stop() }
        let transport = TestTransport.make()
        try await Self.warmUp(transport, server)
        var request = Self.request(server, method: "POST")
        request.httpBody = Self.body
        let started = ContinuousClock.now
        let opened = try await transport.stream(request)
        var received = Data()
        for try await chunk in opened.body { received.append(chunk) }
        #expect(started.duration(to: .now) < Self.quickly)
        #expect(opened.response.statusCode == 200)
        #expect(String(decoding: received, as: UTF8.self) == "POST \(Self.body.count) \(Self.body.count)")
        try Self.expectSentTwiceInFull(server, method: "POST", body: Self.body)
    }

    @Test(arguments: faults)
    func aGetIsSentAgainAsBefore(fault: ServerResponse.Fault) async throws {
        let server = try Self.server(fault: fault)
        defer { server.stop() }
        let request = Self.request(server, method: "GET", path: "item")
        let answer = try await Self.sendOnAConnectionThatDies(request, transport: TestTransport.make(), server: server)
        #expect(answer.status == 200)
        #expect(answer.text == "GET 0 none")
        #expect(answer.elapsed < Self.quickly)
        let requests = server.requests
        #expect(requests.map(\.path) == ["/warmup", "/item", "/item"])
        #expect(requests.count == 3 && requests[1].connectionID != requests[2].connectionID)
    }

    // How URLSessionTransport refuses a one-shot stream it cannot send twice; CurlTransport streams such a body
    // chunked, once, through libcurl's read callback, and has its own tests.
    @Test(arguments: faults)
    func aOneShotStreamFailsFastInsteadOfGoingOutEmpty(fault: ServerResponse.Fault) async throws {
        let server = try Self.server(fault: fault)
        defer { server.stop() }
        var request = Self.request(server, method: "POST")
        request.httpBodyStream = InputStream(data: Self.body)
        let transport = URLSessionTransport()
        try await Self.warmUp(transport, server)
        let started = ContinuousClock.now
        let error = await #expect(throws: NetworkAgentError.self) { _ = try await transport.send(request) }
        #expect(started.duration(to: .now) < Self.quickly)
        #expect(error?.code == .transport, "\(String(describing: error))")
        #expect(error?.urlErrorCode == .networkConnectionLost)
        // Whatever reached the server carried the whole body: never an empty request that looks complete.
        let posts = server.requests.filter { $0.method == "POST" }
        #expect(posts.count == 1)
        #expect(posts.allSatisfy { $0.body == Self.body && $0.isChunked })
    }

    @Test func aBodySentAgainThatFailsAgainIsATransportError() async throws {
        // Every POST is killed, on the reused connection and on the fresh one alike.
        let perConnection = Locked<[Int: Int]>([:])
        let server = try LoopbackServer { request in
            let index = perConnection.withLock { counts in
                counts[request.connectionID, default: 0] += 1
                return counts[request.connectionID, default: 0]
            }
            return index == 1 && request.method == "GET" ? .text("warm") : ServerResponse(fault: .resetBeforeResponse)
        }
        defer { server.stop() }
        var request = Self.request(server, method: "POST")
        request.httpBody = Self.body
        let transport = TestTransport.make()
        try await Self.warmUp(transport, server)
        let started = ContinuousClock.now
        let error = await #expect(throws: NetworkAgentError.self) { _ = try await transport.send(request) }
        #expect(started.duration(to: .now) < Self.quickly)
        #expect(error?.code == .transport, "\(String(describing: error))")
        // Sent on the reused connection, then once more by libcurl on a fresh one, whole both times.
        let posts = server.requests.filter { $0.method == "POST" }
        #expect(posts.count == 2)
        #expect(posts.allSatisfy { $0.body == Self.body })
    }
}
