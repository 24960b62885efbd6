import Foundation
import NetworkAgent
import NetworkAgentTestServer
import NetworkAgentTestSupport
import NetworkAgentTesting
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// How long a streamed exchange lives: what ends it when nobody reads the body, and the deadline of an error body.
@Suite struct StreamLifetimeTests {
    /// The test's own transport, alive for the whole test; `aStreamWhoseTransportIsGoneEndsAsItsTransportDocuments`
    /// drops one.
    let transport = TestTransport.make()

    func provider(_ plugins: [any NetworkAgentPlugin] = []) -> NetworkAgentProvider<TestEndpoint> {
        NetworkAgentProvider(plugins: plugins, agent: NetworkAgent(transport: transport))
    }

    func endpoint(_ server: LoopbackServer, timeout: Duration = .seconds(10)) -> TestEndpoint {
        TestEndpoint(baseURL: server.baseURL, path: "/stream", timeout: timeout)
    }

    /// A body whose first piece arrives at once and whose rest the server holds back for 30 s, watching the socket:
    /// only the client closing the connection ends it sooner.
    static func slowBody(status: Int = 200) -> ServerResponse {
        ServerResponse(
            status: status,
            body: .chunked([Data("first\n".utf8), Data("second\n".utf8)], interval: .seconds(30))
        )
    }

    /// Fails the call in `onResponse`, after the transport handed over a 2xx stream head.
    struct RejectingResponse: NetworkAgentPlugin {
        struct Rejected: Error {}

        func onResponse(
            _ response: URLResponse,
            data: Data,
            request: URLRequest,
            endpoint: any NetworkAgentEndpoint,
            agent: NetworkAgent
        ) async throws -> (data: Data, response: URLResponse) {
            throw Rejected()
        }
    }

    // The limit of 1 s is the issue's: a cancelled transfer closes its socket within milliseconds, and the server
    // would otherwise hold the connection for 30 s.
    @Test("17.9 dropping a stream without reading it closes the connection")
    func droppedStreamClosesTheConnection() async throws {
        let server = try LoopbackServer { _ in Self.slowBody() }
        defer { server.stop() }
        do {
            let stream = try await provider().stream(endpoint: endpoint(server))
            #expect(stream.statusCode == 200)
            #expect(server.openConnectionCount == 1)
        }
        #expect(await eventually(within: .seconds(1)) { server.openConnectionCount == 0 })
    }

    /// A stream whose provider, agent and transport are gone reads to its end on every transport, as when a function
    /// returns a stream it opened with a provider of its own.
    @Test func aStreamOutlivesItsProviderAgentAndTransport() async throws {
        let server = try LoopbackServer { _ in
            ServerResponse(body: .chunked([Data("a\n".utf8), Data("b\n".utf8)], interval: .milliseconds(50)))
        }
        defer { server.stop() }
        // The provider, its agent and its transport are temporaries, released at the end of this statement.
        let stream = try await NetworkAgentProvider<TestEndpoint>(agent: NetworkAgent(transport: TestTransport.make()))
            .stream(endpoint: endpoint(server))
        var lines: [String] = []
        for try await line in stream.body.lines() { lines.append(line) }
        #expect(lines == ["a", "b"])
    }

    @Test("17.9 a plugin throwing in onResponse after a 2xx stream head closes the connection")
    func throwingOnResponseClosesTheConnection() async throws {
        let server = try LoopbackServer { _ in Self.slowBody() }
        defer { server.stop() }
        await #expect(throws: RejectingResponse.Rejected.self) {
            try await provider([RejectingResponse()]).stream(endpoint: endpoint(server))
        }
        #expect(server.requestCount == 1)
        #expect(await eventually(within: .seconds(1)) { server.openConnectionCount == 0 })
    }

    @Test("17.10 an error body that trickles past the deadline fails the stream call with a timeout")
    func tricklingErrorBodyTimesOut() async throws {
        // A 500 head, then one byte of its body every 500 ms for 30 s. libcurl's idle timeout never fires (bytes
        // keep coming); only a deadline on the whole error body ends the call sooner.
        let pieces = Array(repeating: Data("x".utf8), count: 60)
        let server = try LoopbackServer { _ in
            ServerResponse(status: 500, body: .chunked(pieces, interval: .milliseconds(500)))
        }
        defer { server.stop() }
        let started = ContinuousClock.now
        let error = await #expect(throws: NetworkAgentError.self) {
            try await provider().stream(endpoint: endpoint(server, timeout: .seconds(1)))
        }
        let elapsed = ContinuousClock.now - started
        #expect(error?.code == .timedOut)
        // The request's 1 s deadline: not before it, and not a deadline that restarts with each byte, is doubled or
        // rounded up to libcurl's idle timeout (at least 2 s), nor the server's 30 s.
        #expect(elapsed >= .milliseconds(950), "timed out after \(elapsed), before the 1 s deadline")
        #expect(elapsed < .milliseconds(1900), "timed out after \(elapsed) for a 1 s deadline")
        #expect(await eventually { server.openConnectionCount == 0 })
    }
}

/// Records every `HTTPStreamEnd` its registrations receive; registers before or after `next`.
struct StreamEndRecorder: NetworkAgentPlugin {
    let ends = Locked<[HTTPStreamEnd]>([])
    var registersFirst = false

    func intercept(
        _ request: URLRequest,
        endpoint: any NetworkAgentEndpoint,
        next: NetworkAgentExchange
    ) async throws -> (data: Data, response: URLResponse) {
        if registersFirst { next.onStreamEnd { end in ends.withLock { $0.append(end) } } }
        let result = try await next(request)
        if !registersFirst, next.isStreaming { next.onStreamEnd { end in ends.withLock { $0.append(end) } } }
        return result
    }

    var all: [HTTPStreamEnd] { ends.withLock { $0 } }
}

/// What plugins are told of the end of a streamed body (`NetworkAgentExchange.onStreamEnd`).
@Suite struct StreamEndObserverTests {
    let transport = TestTransport.make()

    func provider(_ plugins: [any NetworkAgentPlugin]) -> NetworkAgentProvider<TestEndpoint> {
        NetworkAgentProvider(plugins: plugins, agent: NetworkAgent(transport: transport))
    }

    func endpoint(_ server: LoopbackServer) -> TestEndpoint {
        TestEndpoint(baseURL: server.baseURL, path: "/stream", timeout: .seconds(10))
    }

    @Test func aBodyReadToItsEndIsCompletedWithItsBytes() async throws {
        let chunks = Array(repeating: Data(repeating: 7, count: 1000), count: 5)
        let server = try LoopbackServer { _ in ServerResponse(body: .chunked(chunks, interval: .milliseconds(10))) }
        defer { server.stop() }
        let after = StreamEndRecorder()
        let before = StreamEndRecorder(registersFirst: true)
        let stream = try await provider([after, before]).stream(endpoint: endpoint(server))
        #expect(after.all.isEmpty && before.all.isEmpty)
        var total = 0
        for try await chunk in stream.body { total += chunk.count }
        #expect(total == 5000)
        for recorder in [after, before] {
            #expect(recorder.all.count == 1)
            #expect(recorder.all.first?.isCompleted == true)
            #expect(recorder.all.first?.bytes == 5000)
        }
    }

    @Test func leavingTheLoopEarlyIsCancelledWithTheBytesRead() async throws {
        let chunks = Array(repeating: Data("tick\n".utf8), count: 200)
        let server = try LoopbackServer { _ in ServerResponse(body: .chunked(chunks, interval: .milliseconds(25))) }
        defer { server.stop() }
        let recorder = StreamEndRecorder()
        let stream = try await provider([recorder]).stream(endpoint: endpoint(server))
        var read = 0
        for try await chunk in stream.body {
            read += chunk.count
            break
        }
        #expect(recorder.all.count == 1)
        #expect(recorder.all.first?.bytes == read)
        if case .cancelled? = recorder.all.first?.outcome {} else { Issue.record("\(recorder.all)") }
    }

    @Test func aBrokenConnectionIsFailedWithTheBytesRead() async throws {
        let server = try LoopbackServer { _ in
            ServerResponse(body: .data(Data(count: 1000)), fault: .closeMidBody(afterBytes: 100))
        }
        defer { server.stop() }
        let recorder = StreamEndRecorder()
        let stream = try await provider([recorder]).stream(endpoint: endpoint(server))
        var read = 0
        await #expect(throws: NetworkAgentError.self) {
            for try await chunk in stream.body { read += chunk.count }
        }
        // The 100 bytes the server sent before closing were delivered, and the end says so.
        #expect(read == 100)
        #expect(recorder.all.count == 1)
        #expect(recorder.all.first?.bytes == 100)
        if case .failed(let error)? = recorder.all.first?.outcome {
            #expect(error.code == .transport)
        } else {
            Issue.record("expected a failure, got \(recorder.all)")
        }
    }

    @Test func aCallThatFailsTellsEveryRegistrationOnce() async throws {
        let server = try LoopbackServer { request in
            request.path == "/stream" ? StreamLifetimeTests.slowBody() : .text("no", status: 503)
        }
        defer { server.stop() }
        let rejected = StreamEndRecorder(registersFirst: true)
        await #expect(throws: StreamLifetimeTests.RejectingResponse.Rejected.self) {
            try await provider([rejected, StreamLifetimeTests.RejectingResponse()]).stream(endpoint: endpoint(server))
        }
        let refused = StreamEndRecorder(registersFirst: true)
        await #expect(throws: NetworkAgentError.self) {
            try await provider([refused]).stream(
                endpoint: TestEndpoint(baseURL: server.baseURL, path: "/other", timeout: .seconds(10))
            )
        }
        for recorder in [rejected, refused] {
            #expect(recorder.all.count == 1)
            #expect(recorder.all.first?.bytes == 0)
            if case .cancelled? = recorder.all.first?.outcome {} else { Issue.record("\(recorder.all)") }
        }
    }

    @Test func aBodyFromATransportThatCannotStreamIsObservedToo() async throws {
        let stub = StubTransport(fallback: .init(body: Data("a\nb\n".utf8)))
        let recorder = StreamEndRecorder()
        let provider = NetworkAgentProvider<TestEndpoint>(plugins: [recorder], agent: NetworkAgent(transport: stub))
        var lines: [String] = []
        for try await line in try await provider.stream(endpoint: TestEndpoint()).body.lines() { lines.append(line) }
        #expect(lines == ["a", "b"])
        #expect(recorder.all.count == 1)
        #expect(recorder.all.first?.isCompleted == true)
        #expect(recorder.all.first?.bytes == 4)
        // A call that does not stream never calls the observer.
        _ = try await provider.request(endpoint: TestEndpoint())
        #expect(recorder.all.count == 1)
    }
}
