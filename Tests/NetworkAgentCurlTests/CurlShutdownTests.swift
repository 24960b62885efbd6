import Foundation
import NetworkAgent
import NetworkAgentTestServer
import Testing

@testable import NetworkAgentCurl

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `shutdown()`: what is in flight fails with a typed error, new work fails the same way unsent, the engine thread
/// ends and the connections close. A transport dropped without it still cleans up.
@Suite(.timeLimit(.minutes(1))) struct CurlShutdownTests {
    /// Whether the kernel thread `id` of this process still exists.
    static func threadExists(_ id: Int) -> Bool { FileManager.default.fileExists(atPath: "/proc/self/task/\(id)") }

    static func isShutdown(_ error: NetworkAgentError?) -> Bool {
        error?.code == .transport && error?.curlError?.code == .shutdown && error?.urlErrorCode == nil
    }

    @Test func requestsInFlightFailWithTheShutdownError() async throws {
        let body = Array(repeating: Data(repeating: 0x61, count: 1000), count: 200)
        let server = try LoopbackServer { request in
            request.path == "/stall"
                ? ServerResponse(fault: .stall) : ServerResponse(body: .chunked(body, interval: .milliseconds(50)))
        }
        let transport = CurlTransport()
        let buffered = Task { try await transport.send(request(server, "/stall", timeout: 30)) }
        let streamed = try await transport.stream(request(server, "/trickle", timeout: 30))
        let reader = Task {
            var count = 0
            for try await chunk in streamed.body { count += chunk.count }
            return count
        }
        #expect(await eventually { server.requestCount == 2 })
        let started = ContinuousClock.now
        await transport.shutdown()
        #expect(started.duration(to: .now) < .seconds(2))
        let bufferedResult = await buffered.result
        guard case .failure(let error as NetworkAgentError) = bufferedResult else {
            Issue.record("expected the shutdown error, got \(bufferedResult)")
            return
        }
        #expect(Self.isShutdown(error), "\(error)")
        let readResult = await reader.result
        guard case .failure(let readError as NetworkAgentError) = readResult else {
            Issue.record("expected the shutdown error from the body, got \(readResult)")
            return
        }
        #expect(Self.isShutdown(readError), "\(readError)")
        #expect(transport.activeTransferCount == 0)
        #expect(await eventually(within: .seconds(3)) { server.openConnectionCount == 0 })
    }

    @Test func workAfterShutdownFailsUnsent() async throws {
        let server = try LoopbackServer { _ in .text("ok") }
        let transport = CurlTransport()
        _ = try await transport.send(request(server, "/before"))
        await transport.shutdown()
        // The keep-alive connection of the first request is closed too.
        #expect(await eventually(within: .seconds(3)) { server.openConnectionCount == 0 })
        let sent = await networkError { _ = try await transport.send(request(server, "/after")) }
        #expect(Self.isShutdown(sent), "\(String(describing: sent))")
        let streamed = await networkError { _ = try await transport.stream(request(server, "/after")) }
        #expect(Self.isShutdown(streamed), "\(String(describing: streamed))")
        #expect(server.requestCount == 1)
    }

    @Test func theEngineThreadEndsAndASecondShutdownReturnsAtOnce() async throws {
        let server = try LoopbackServer { _ in .text("ok") }
        let transport = CurlTransport()
        _ = try await transport.send(request(server, "/"))
        let engine = try #require(transport.engine)
        let thread = try #require(engine.threadID.withLock { $0 })
        #expect(Self.threadExists(thread))
        await transport.shutdown()
        #expect(await eventually(within: .seconds(3)) { !Self.threadExists(thread) })
        let started = ContinuousClock.now
        await transport.shutdown()
        #expect(started.duration(to: .now) < .milliseconds(500))
    }

    @Test func aTransportDroppedWithoutShutdownStillCleansUp() async throws {
        let server = try LoopbackServer { _ in .text("ok") }
        weak var engine: CurlEngine?
        var thread: Int?
        #if DEBUG
        let droppedBefore = CurlTransport.droppedWithoutShutdown.withLock { $0 }
        #endif
        do {
            let transport = CurlTransport()
            _ = try await transport.send(request(server, "/"))
            engine = transport.engine
            thread = engine?.threadID.withLock { $0 }
        }
        let id = try #require(thread)
        // The thread ends, the engine (multi handle, connections) goes with it.
        #expect(await eventually(within: .seconds(3)) { !Self.threadExists(id) && engine == nil })
        #expect(await eventually(within: .seconds(3)) { server.openConnectionCount == 0 })
        #if DEBUG
        // Debug builds say so on standard error (once per process) and count it.
        #expect(CurlTransport.droppedWithoutShutdown.withLock { $0 } > droppedBefore)
        #endif
    }
}
