import Foundation
import NetworkAgent
import NetworkAgentTestServer
import NetworkAgentTestSupport
import NetworkAgentTesting
import NetworkAgentToolSupport
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

#if canImport(Glibc)
import Glibc
#endif

/// Splits bytes at the given offsets, to send a body in awkward chunks.
func split(_ text: String, at offsets: [Int]) -> [Data] {
    let bytes = Array(text.utf8)
    var pieces: [Data] = []
    var start = 0
    for offset in offsets.sorted() where offset > start && offset < bytes.count {
        pieces.append(Data(bytes[start..<offset]))
        start = offset
    }
    pieces.append(Data(bytes[start...]))
    return pieces
}

struct Reading: Codable, Equatable, Sendable {
    let n: Int
    let s: String
}

@Suite struct StreamingTests {
    /// The test's own transport, alive for the whole test (whether a stream outlives its transport is
    /// StreamLifetimeTests' question).
    let transport = TestTransport.make()

    func provider(_ plugins: [any NetworkAgentPlugin] = []) -> NetworkAgentProvider<TestEndpoint> {
        NetworkAgentProvider(plugins: plugins, agent: NetworkAgent(transport: transport))
    }

    func endpoint(
        _ server: LoopbackServer,
        _ path: String = "/stream",
        method: HTTPMethod = .get,
        task: HTTPTask = .requestPlain
    ) -> TestEndpoint {
        TestEndpoint(baseURL: server.baseURL, path: path, method: method, task: task, timeout: .seconds(10))
    }

    @Test func ndjsonSplitMidLineAndMidCharacter() async throws {
        let text = "{\"n\":1,\"s\":\"café\"}\n\n{\"n\":2,\"s\":\"€uro\"}\r\n{\"n\":3,\"s\":\"z\"}"
        let eAcute = Array(text.utf8).firstIndex(of: 0xC3)! + 1
        let euro = Array(text.utf8).firstIndex(of: 0xE2)! + 2
        let chunks = split(text, at: [3, eAcute, 25, euro, euro + 3, 40])
        let server = try LoopbackServer { _ in ServerResponse(body: .chunked(chunks, interval: .milliseconds(20))) }
        let stream = try await provider().stream(endpoint: endpoint(server))
        var readings: [Reading] = []
        for try await reading in stream.body.ndjson(as: Reading.self) { readings.append(reading) }
        #expect(readings == [Reading(n: 1, s: "café"), Reading(n: 2, s: "€uro"), Reading(n: 3, s: "z")])
    }

    @Test func aBadNDJSONLineEndsTheStreamWithATypedError() async throws {
        let server = try LoopbackServer { _ in .text("{\"n\":1,\"s\":\"a\"}\nnot json\n{\"n\":3,\"s\":\"c\"}\n") }
        let stream = try await provider().stream(endpoint: endpoint(server))
        var readings: [Reading] = []
        let error = await #expect(throws: NetworkAgentError.self) {
            for try await reading in stream.body.ndjson(as: Reading.self) { readings.append(reading) }
        }
        #expect(error?.code == .decoding)
        #expect(error?.message.contains("line 2") == true)
        #expect(readings == [Reading(n: 1, s: "a")])
    }

    @Test func linesHandleCRLFCRAndLF() async throws {
        let server = try LoopbackServer { _ in
            ServerResponse(
                body: .chunked(split("a\r\nb\rc\nd\r", at: [2, 3, 5]) + [Data("\ne".utf8)], interval: .zero)
            )
        }
        var lines: [String] = []
        for try await line in try await provider().stream(endpoint: endpoint(server)).body.lines() {
            lines.append(line)
        }
        #expect(lines == ["a", "b", "c", "d", "e"])
    }

    @Test func serverSentEvents() async throws {
        let text = """
            \u{FEFF}: a comment\r
            retry: 2500\r
            data: first\r
            \r
            event: update\r
            id: 7\r
            data: line one\r
            data:line two\r
            \r
            data\r
            \r
            id: 8\r
            data: {"x":1}\r
            \r
            data: never dispatched
            """
        let server = try LoopbackServer { _ in
            ServerResponse(
                headers: [("Content-Type", "text/event-stream")],
                body: .chunked(split(text, at: [5, 17, 30, 44, 61, 70, 95]), interval: .milliseconds(10))
            )
        }
        var events: [ServerSentEvent] = []
        let stream = try await provider().stream(endpoint: endpoint(server))
        for try await event in stream.body.serverSentEvents() { events.append(event) }
        #expect(
            events == [
                ServerSentEvent(data: "first", retry: .milliseconds(2500)),
                ServerSentEvent(event: "update", data: "line one\nline two", id: "7"),
                ServerSentEvent(data: "", id: "7"),
                ServerSentEvent(data: "{\"x\":1}", id: "8"),
            ]
        )
    }

    @Test func chunksArriveAsTheyAreSent() async throws {
        // The server sends one line, then holds the rest back for 30 s: only incremental delivery sees the line.
        let server = try LoopbackServer { _ in
            ServerResponse(body: .chunked([Data("first\n".utf8), Data("second\n".utf8)], interval: .seconds(30)))
        }
        let stream = try await provider().stream(endpoint: endpoint(server))
        let lines = Locked<[String]>([])
        let consumer = Task {
            for try await line in stream.body.lines() { lines.withLock { $0.append(line) } }
        }
        defer { consumer.cancel() }
        #expect(await eventually(within: .seconds(10)) { lines.withLock { $0 } == ["first"] })
    }

    @Test func leavingTheLoopClosesTheConnection() async throws {
        let chunks = Array(repeating: Data("tick\n".utf8), count: 200)
        let server = try LoopbackServer { _ in ServerResponse(body: .chunked(chunks, interval: .milliseconds(25))) }
        let stream = try await provider().stream(endpoint: endpoint(server))
        for try await line in stream.body.lines() {
            #expect(line == "tick")
            break
        }
        #expect(await eventually { server.openConnectionCount == 0 })
    }

    @Test func cancellingTheConsumerCancelsTheStream() async throws {
        let server = try LoopbackServer { _ in
            ServerResponse(body: .chunked([Data("a\n".utf8), Data("b\n".utf8)], interval: .seconds(30)))
        }
        let stream = try await provider().stream(endpoint: endpoint(server))
        let consumer = Task {
            var lines = 0
            for try await _ in stream.body.lines() { lines += 1 }
            return lines
        }
        consumer.cancel()
        let result = await consumer.result
        if case .failure(let error as NetworkAgentError) = result {
            #expect(error.code == .cancelled)
        } else {
            Issue.record("expected a cancellation error, got \(result)")
        }
        #expect(await eventually { server.openConnectionCount == 0 })
    }

    @Test func anErrorStatusThrowsWithItsBody() async throws {
        let server = try LoopbackServer { _ in .text("boom", status: 500) }
        let error = await #expect(throws: NetworkAgentError.self) {
            try await provider().stream(endpoint: endpoint(server))
        }
        #expect(error?.code == .unacceptableStatus)
        #expect(error?.statusCode == 500)
        #expect(error?.data == Data("boom".utf8))
    }

    @Test func a401BeforeTheBodyCanBeRefreshedAndRetried() async throws {
        /// Retries a 401 once with a fresh token, as a token refresher would.
        struct Refresh: NetworkAgentPlugin {
            func intercept(
                _ request: URLRequest,
                endpoint: any NetworkAgentEndpoint,
                next: NetworkAgentExchange
            )
                async throws -> (data: Data, response: URLResponse)
            {
                #expect(next.isStreaming)
                let first = try await next(request)
                guard (first.response as? HTTPURLResponse)?.statusCode == 401 else { return first }
                var retry = request
                retry.setValue("Bearer fresh", forHTTPHeaderField: "Authorization")
                return try await next(retry)
            }
        }
        let server = try LoopbackServer { request in
            request.header("Authorization") == "Bearer fresh"
                ? ServerResponse(body: .chunked([Data("one\n".utf8), Data("two\n".utf8)], interval: .milliseconds(10)))
                : .text("expired", status: 401)
        }
        let stream = try await provider([Refresh()]).stream(endpoint: endpoint(server))
        var lines: [String] = []
        for try await line in stream.body.lines() { lines.append(line) }
        #expect(lines == ["one", "two"])
        #expect(server.requestCount == 2)
    }

    @Test func uploadAndDownloadProgress() async throws {
        let size = 8 << 20
        let server = try LoopbackServer { request in
            ServerResponse(status: 200, body: .data(Data(repeating: 1, count: request.body.count)))
        }
        let seen = Locked<[TransferProgress]>([])
        let (data, _) = try await provider().request(
            endpoint: endpoint(
                server,
                "/echo",
                method: .post,
                task: .requestWithoutAttributes(content: Data(count: size))
            ),
            progress: { progress in seen.withLock { $0.append(progress) } }
        )
        #expect(data.count == size)
        let progress = seen.withLock { $0 }
        // libcurl decides how often it reports the upload; what must hold is that it is reported, never goes back,
        // and reaches the whole body.
        let sent = progress.map(\.bytesSent).filter { $0 > 0 }
        #expect(!sent.isEmpty && sent == sent.sorted())
        #expect(progress.contains { $0.bytesSent == size && $0.totalBytesExpectedToSend == size })
        let received = progress.map(\.bytesReceived)
        #expect(received == received.sorted())
        #expect(received.last == size)
        #expect(progress.last?.totalBytesExpectedToReceive == size)
        // Reported while the body arrives, not only at its end: libcurl hands the body over in pieces of at most
        // its receive buffer (16 KiB by default), far less than 8 MiB, so a value in between is reported however
        // fast or slow the machine is.
        #expect(received.contains { $0 > 0 && $0 < size }, "download progress: \(Set(received).sorted())")
    }

    @Test func streamProgressCountsBytesAsTheyArrive() async throws {
        let chunks = Array(repeating: Data(repeating: 7, count: 1000), count: 5)
        // 100 ms apart: each piece reaches the client on its own unless the machine stalls for 400 ms.
        let server = try LoopbackServer { _ in ServerResponse(body: .chunked(chunks, interval: .milliseconds(100))) }
        let seen = Locked<[Int]>([])
        let stream = try await provider().stream(
            endpoint: endpoint(server),
            progress: { progress in seen.withLock { $0.append(progress.bytesReceived) } }
        )
        var total = 0
        // For each chunk read: the bytes read before it, and the most progress reported by then.
        var reads: [(before: Int, reported: Int)] = []
        for try await chunk in stream.body {
            reads.append((total, seen.withLock { $0.max() ?? 0 }))
            total += chunk.count
        }
        #expect(total == 5000)
        let reported = seen.withLock { $0 }
        #expect(reported == reported.sorted())
        #expect(reported.last == 5000)
        // Reported as the body arrived, not once at its end: both transports report a chunk right after handing it
        // to the stream, on the thread that hands over the next one, so by the time a chunk is read every byte
        // before it has been reported.
        #expect(reported.contains { $0 > 0 && $0 < 5000 }, "progress: \(reported)")
        #expect(reads.count > 1, "the whole body came as one chunk: nothing to tell")
        for read in reads {
            #expect(
                read.reported >= read.before,
                "a chunk after \(read.before) bytes was read with \(read.reported) reported"
            )
        }
    }

    // FoundationNetworking cannot pause a download, so URLSessionTransport ends the stream; CurlTransport pauses the
    // transfer instead (the next test).
    @Test(.enabled(if: TestTransport.kind == .urlSession, "CurlTransport pauses instead of failing the stream"))
    func aConsumerTooFarBehindEndsTheStreamWithBoundedMemory() async throws {
        // 64 MiB against a 2 MiB buffer. The server closes the connection once it has written everything, so the
        // wait below ends either way: the transport gave up on the body (and closed), or the whole body arrived.
        let chunk = Data(repeating: 0xAB, count: 256 << 10)
        let chunkCount = 256
        let server = try LoopbackServer(closesConnections: true) { _ in
            ServerResponse(body: .chunked(Array(repeating: chunk, count: chunkCount), interval: .zero))
        }
        let transport = TestTransport.make(streamBufferLimit: 2 << 20)
        let provider = NetworkAgentProvider<TestEndpoint>(agent: NetworkAgent(transport: transport))
        // The resident set tells what the process holds only on Linux (/proc) and without a sanitizer: ASan keeps
        // freed memory in its quarantine and TSan adds shadow memory for whatever is touched. Those runs still check
        // that the stream overflows and ends early; the plain runs measure.
        #if os(Linux)
        let measures = !Self.underSanitizer
        #else
        let measures = false
        #endif
        let before =
            measures ? try #require(ProcessMemory.residentKilobytesAfterTrim(), "no VmRSS in /proc/self/status") : 0
        let stream = try await provider.stream(endpoint: endpoint(server))
        var iterator = stream.body.makeAsyncIterator()
        let first = try await iterator.next()
        #expect(first?.isEmpty == false)
        // Stop reading until the connection is gone and the transfer is over: every callback FoundationNetworking
        // had queued for the delegate has been delivered by then.
        #expect(await eventually(within: .seconds(20)) { server.openConnectionCount == 0 })
        #expect(await eventually { TestTransport.activeTransfers(of: transport) == 0 })
        // What the process holds now, the unread stream included: the 2 MiB buffer at most, far below the 64 MiB a
        // transport that buffered the whole body holds.
        if measures {
            let after = try #require(ProcessMemory.residentKilobytesAfterTrim())
            let grownMiB = Double(after - before) / 1024
            #expect(grownMiB < 16, "resident memory grew by \(grownMiB) MiB while 64 MiB were pushed at a 2 MiB buffer")
        }
        var read = first?.count ?? 0
        do {
            while let piece = try await iterator.next() { read += piece.count }
            Issue.record("the stream ended normally after \(read) bytes instead of overflowing")
        } catch let error as NetworkAgentError {
            #expect(error.code == .streamOverflow, "\(error)")
        }
        #expect(read < chunk.count * chunkCount)
    }

    /// Whether the process runs under AddressSanitizer or ThreadSanitizer (their runtimes export these symbols).
    static var underSanitizer: Bool {
        #if canImport(Glibc)
        let everything = UnsafeMutableRawPointer(bitPattern: 0)  // RTLD_DEFAULT
        return dlsym(everything, "__asan_init") != nil || dlsym(everything, "__tsan_init") != nil
        #else
        return false
        #endif
    }

    @Test(.enabled(if: TestTransport.kind == .curl, "URLSessionTransport cannot pause: it ends the stream (above)"))
    func aConsumerTooFarBehindPausesTheTransferAndGetsEveryByte() async throws {
        // 32 MiB: more than the 2 MiB buffer and both sockets' kernel buffers (a few MiB each on loopback) hold.
        let chunks = (0..<64).map { Data(repeating: UInt8($0), count: 512 << 10) }
        // The server closes the connection once it has written the whole response.
        let server = try LoopbackServer(closesConnections: true) { _ in
            ServerResponse(body: .chunked(chunks, interval: .zero))
        }
        let transport = TestTransport.make(streamBufferLimit: 2 << 20)
        let provider = NetworkAgentProvider<TestEndpoint>(agent: NetworkAgent(transport: transport))
        let stream = try await provider.stream(endpoint: endpoint(server))
        var iterator = stream.body.makeAsyncIterator()
        var received = try await iterator.next() ?? Data()
        // While nothing is read the transfer is paused, so the server cannot finish writing and close: the
        // condition stays false and the wait ends at its bound. (A transport that buffered everything would let the
        // server finish and close; one that failed would show below.)
        #expect(await !eventually(within: .seconds(2)) { server.openConnectionCount == 0 })
        while let piece = try await iterator.next() { received.append(piece) }
        #expect(received == chunks.reduce(Data(), +))
    }

    @Test func aConsumerWithinTheLimitGetsEveryByte() async throws {
        let chunk = Data(repeating: 0xAB, count: 256 << 10)
        let server = try LoopbackServer { _ in
            ServerResponse(body: .chunked(Array(repeating: chunk, count: 64), interval: .zero))
        }
        let stream = try await provider().stream(endpoint: endpoint(server))
        var total = 0
        for try await piece in stream.body { total += piece.count }
        #expect(total == 64 * chunk.count)
    }

    @Test func transportsThatCannotStreamDeliverOneChunk() async throws {
        let stub = StubTransport(fallback: .init(body: Data("a\nb\n".utf8)))
        let provider = NetworkAgentProvider<TestEndpoint>(agent: NetworkAgent(transport: stub))
        var lines: [String] = []
        for try await line in try await provider.stream(endpoint: TestEndpoint()).body.lines() { lines.append(line) }
        #expect(lines == ["a", "b"])
    }
}
