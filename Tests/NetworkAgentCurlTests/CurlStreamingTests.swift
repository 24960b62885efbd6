import Foundation
import NetworkAgent
import NetworkAgentTestServer
import Testing

@testable import NetworkAgentCurl

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Streamed bodies: backpressure, early ends, deadlines, and the response limit.
@Suite struct CurlStreamingTests {
    /// A body whose first piece arrives at once and whose rest the server holds back for 30 s.
    static func slowBody() -> ServerResponse {
        ServerResponse(body: .chunked([Data("first\n".utf8), Data("second\n".utf8)], interval: .seconds(30)))
    }

    @Test func aSlowConsumerPausesTheTransferAndGetsEveryByte() async throws {
        let piece = Data((0..<65_536).map { UInt8(truncatingIfNeeded: $0) })
        let count = 256  // 16 MiB
        let server = try LoopbackServer { _ in
            ServerResponse(body: .chunked(Array(repeating: piece, count: count), interval: .zero))
        }
        let transport = CurlTransport(configuration: .init(streamBufferLimit: 256 << 10))
        let opened = try await transport.stream(request(server, "/big"))
        var iterator = opened.body.makeAsyncIterator()
        var received = try #require(try await iterator.next()).count
        // The consumer stops reading: the transfer must pause rather than buffer the rest.
        #expect(await eventually(within: .seconds(10)) { transport.pauseCount > 0 })
        while let chunk = try await iterator.next() { received += chunk.count }
        #expect(received == piece.count * count)
    }

    @Test func droppingAStreamUnreadClosesTheConnection() async throws {
        let server = try LoopbackServer { _ in Self.slowBody() }
        let transport = CurlTransport()
        do {
            let opened = try await transport.stream(request(server, "/s"))
            #expect(opened.response.statusCode == 200)
            #expect(server.openConnectionCount == 1)
        }
        #expect(await eventually(within: .seconds(2)) { server.openConnectionCount == 0 })
    }

    @Test func leavingTheLoopEarlyClosesTheConnection() async throws {
        let server = try LoopbackServer { _ in Self.slowBody() }
        let transport = CurlTransport()
        let opened = try await transport.stream(request(server, "/s"))
        for try await chunk in opened.body {
            #expect(String(decoding: chunk, as: UTF8.self) == "first\n")
            break
        }
        #expect(await eventually(within: .seconds(2)) { server.openConnectionCount == 0 })
    }

    @Test func cancellingTheReaderEndsTheStreamAndClosesTheConnection() async throws {
        let server = try LoopbackServer { _ in Self.slowBody() }
        let transport = CurlTransport()
        let opened = try await transport.stream(request(server, "/s"))
        let reader = Task {
            var chunks = 0
            for try await _ in opened.body { chunks += 1 }
            return chunks
        }
        #expect(await eventually { server.requestCount == 1 })
        reader.cancel()
        _ = await reader.result
        #expect(await eventually(within: .seconds(2)) { server.openConnectionCount == 0 })
    }

    @Test func theDeadlineCoversTheHeadOnly() async throws {
        let server = try LoopbackServer { request in
            request.path == "/late"
                ? ServerResponse(status: 200, delay: .seconds(5))
                : ServerResponse(body: .chunked([Data("a".utf8), Data("b".utf8)], interval: .milliseconds(700)))
        }
        let transport = CurlTransport()
        let error = await networkError { _ = try await transport.stream(request(server, "/late", timeout: 0.3)) }
        #expect(error?.code == .timedOut)
        let opened = try await transport.stream(request(server, "/trickle", timeout: 0.5))
        var body = Data()
        for try await chunk in opened.body { body.append(chunk) }
        #expect(String(decoding: body, as: UTF8.self) == "ab")
    }

    @Test func aStreamedBodyOverTheLimitFailsAfterWhatCameBefore() async throws {
        let piece = Data(repeating: 0x62, count: 4096)
        let server = try LoopbackServer { _ in
            ServerResponse(body: .chunked([piece, piece], interval: .milliseconds(200)))
        }
        let provider = NetworkAgentProvider<CurlTestEndpoint>(
            agent: NetworkAgent(transport: CurlTransport(), configuration: .init(maximumResponseBytes: 6000))
        )
        var received = 0
        let error = await networkError {
            let opened = try await provider.stream(endpoint: CurlTestEndpoint(baseURL: server.baseURL))
            for try await chunk in opened.body { received += chunk.count }
        }
        #expect(error?.code == .responseTooLarge)
        #expect(received <= 6000)
        #expect(await eventually(within: .seconds(2)) { server.openConnectionCount == 0 })
    }
}

/// A transport's engine thread ends with the transport, and what was in flight ends with a cancellation.
@Suite struct CurlLifetimeTests {
    @Test func droppingTheTransportStopsItsEngineAndEndsOpenStreams() async throws {
        let server = try LoopbackServer { _ in CurlStreamingTests.slowBody() }
        weak var engine: CurlEngine?
        var body: HTTPByteStream?
        do {
            let transport = CurlTransport()
            engine = transport.engine
            #expect(engine != nil)
            body = try await transport.stream(request(server, "/s")).body
        }
        // The thread holds its engine until its loop has ended: a nil weak reference means the thread is done.
        #expect(await eventually(within: .seconds(2)) { engine == nil })
        #expect(await eventually(within: .seconds(2)) { server.openConnectionCount == 0 })
        var chunks: [Data] = []
        let error = await networkError {
            for try await chunk in try #require(body) { chunks.append(chunk) }
        }
        #expect(error?.code == .cancelled)
    }
}
