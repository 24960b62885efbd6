import Foundation
import NetworkAgent
import NetworkAgentTestServer
import Testing

@testable import NetworkAgentCurl

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// More HTTP/1.1 requests in flight than a host's connections: the ones without a connection wait in the engine's
/// own line, off libcurl's multi handle (where each would cost CPU on every wake-up), and still complete, cancel and
/// time out as before.
@Suite(.timeLimit(.minutes(1))) struct CurlAdmissionTests {
    /// A transport with two connections per host.
    let transport = CurlTransport(configuration: .init(maximumConnectionsPerHost: 2))

    @Test func requestsBeyondTheConnectionsWaitOffLibcurlAndAllComplete() async throws {
        let server = try LoopbackServer { request in ServerResponse(status: 200, delay: .milliseconds(150)) }
        let bodies = try await withThrowingTaskGroup(of: (Int, Int).self) { group in
            for index in 0..<6 {
                group.addTask {
                    let (_, response) = try await transport.text(request(server, "/\(index)"))
                    return (index, response.statusCode)
                }
            }
            // While the first two are answered slowly, the other four wait: only two transfers are on libcurl.
            #expect(await eventually(within: .seconds(5)) { server.requestCount >= 2 })
            #expect(transport.activeTransferCount == 2)
            var statuses: [Int: Int] = [:]
            for try await (index, status) in group { statuses[index] = status }
            return statuses
        }
        #expect(bodies.count == 6 && bodies.values.allSatisfy { $0 == 200 })
        #expect(server.requestCount == 6)
        #expect(server.connectionCount <= 2)
        #expect(transport.activeTransferCount == 0)
        await transport.shutdown()
    }

    @Test func aWaitingRequestCanBeCancelledAndNeverReachesTheServer() async throws {
        let (one, server, slow) = try await busyConnection(answeringAfter: .milliseconds(600))
        let started = ContinuousClock.now
        let waiting = Task { try await one.text(request(server, "/waiting")) }
        try await Task.sleep(for: .milliseconds(50))
        waiting.cancel()
        guard case .failure(let error as NetworkAgentError) = await waiting.result else {
            Issue.record("expected the waiting request to fail as cancelled")
            return
        }
        #expect(error.code == .cancelled)
        #expect(started.duration(to: .now) < .milliseconds(500), "cancelled only when the connection was free")
        #expect(try await slow.value.1.statusCode == 200)
        // The line let it go: the connection serves the next request, and the cancelled one was never sent.
        #expect(try await one.text(request(server, "/after")).0 == "quick")
        #expect(server.requests.map(\.path) == ["/slow", "/after"])
        await one.shutdown()
    }

    @Test func aWaitingRequestTimesOutFromWhenItWasSent() async throws {
        let (one, server, slow) = try await busyConnection(answeringAfter: .milliseconds(900))
        let started = ContinuousClock.now
        let error = await networkError { _ = try await one.send(request(server, "/waiting", timeout: 0.3)) }
        let elapsed = started.duration(to: .now)
        #expect(error?.code == .timedOut)
        // Its 0.3 s, counted while it waited: not after the slow answer freed the connection (0.9 s).
        #expect(elapsed >= .milliseconds(250), "timed out after \(elapsed), before the 0.3 s deadline")
        #expect(elapsed < .milliseconds(750), "timed out after \(elapsed): the wait did not count")
        #expect(try await slow.value.1.statusCode == 200)
        #expect(server.requests.map(\.path) == ["/slow"])
        await one.shutdown()
    }

    @Test func aStreamWaitingForItsHeadTimesOutInLine() async throws {
        let (one, server, slow) = try await busyConnection(answeringAfter: .milliseconds(900))
        let started = ContinuousClock.now
        let error = await networkError { _ = try await one.stream(request(server, "/waiting", timeout: 0.3)) }
        #expect(error?.code == .timedOut)
        #expect(started.duration(to: .now) < .milliseconds(750))
        #expect(try await slow.value.1.statusCode == 200)
        await one.shutdown()
    }

    @Test func shutdownFailsTheWaitingToo() async throws {
        let one = CurlTransport(configuration: .init(maximumConnectionsPerHost: 1))
        let server = try LoopbackServer { _ in ServerResponse(status: 200, delay: .milliseconds(400)) }
        let first = Task { try await one.send(request(server, "/first")) }
        #expect(await eventually(within: .seconds(5)) { server.requestCount == 1 })
        let waiting = Task { try await one.send(request(server, "/waiting")) }
        try await Task.sleep(for: .milliseconds(50))
        await one.shutdown()
        for call in [first, waiting] {
            guard case .failure(let error as NetworkAgentError) = await call.result else {
                Issue.record("expected a shutdown failure")
                continue
            }
            #expect(error.curlError?.code == .shutdown, "\(error)")
        }
        #expect(server.requests.map(\.path) == ["/first"])
    }

    /// Each origin has its own limit, whichever origin the transfer before had (the engine reuses the last origin's
    /// text when the next is the same): with one connection per host busy on one server, the other is not held up.
    @Test func anotherOriginDoesNotWaitForABusyOne() async throws {
        let (one, busy, slow) = try await busyConnection(answeringAfter: .milliseconds(800))
        let other = try LoopbackServer { _ in .text("other") }
        let started = ContinuousClock.now
        #expect(try await one.text(request(other, "/a")).0 == "other")
        #expect(try await one.text(request(other, "/b")).0 == "other")
        #expect(started.duration(to: .now) < .milliseconds(600), "waited for the busy origin's connection")
        // And the busy origin's next request still waits its turn, then goes.
        #expect(try await one.text(request(busy, "/after")).0 == "quick")
        #expect(try await slow.value.1.statusCode == 200)
        #expect(busy.requests.map(\.path) == ["/slow", "/after"])
        await one.shutdown()
    }

    /// A line that never empties (more requests than connections, all the time) lets go of each transfer when it
    /// leaves, not when the line is next compacted: a finished request's transfer (its request, body and header
    /// list) is freed by its caller, not kept until a batch of them is freed on the engine thread.
    @Test func aWaitingLineLetsGoOfTheTransfersThatLeftIt() throws {
        let url = try #require(URL(string: "http://example.test/line"))
        func transfer() -> CurlTransfer { .plainGET(url) }
        var line = CurlEngine.WaitingLine()
        weak var left: CurlTransfer?
        do {
            let first = transfer()
            left = first
            line.append(first)
        }
        line.append(transfer())
        line.append(transfer())
        #expect(line.popFirst() === left)
        #expect(left == nil, "the line still holds the transfer that left it")
        #expect(!line.isEmpty)
        #expect(Array(line.waiting).count == 2)
    }

    /// A transport with one connection per host, busy with `/slow`, which the server answers after `delay`
    /// (every other path at once): the next request to that server waits in the engine's line.
    private func busyConnection(
        answeringAfter delay: Duration
    ) async throws
        -> (CurlTransport, LoopbackServer, Task<(String, HTTPURLResponse), any Error>)
    {
        let one = CurlTransport(configuration: .init(maximumConnectionsPerHost: 1))
        let server = try LoopbackServer { request in
            request.path == "/slow" ? ServerResponse(status: 200, delay: delay) : .text("quick")
        }
        let slow = Task { try await one.text(request(server, "/slow")) }
        #expect(await eventually(within: .seconds(5)) { server.requestCount == 1 })
        return (one, server, slow)
    }
}
