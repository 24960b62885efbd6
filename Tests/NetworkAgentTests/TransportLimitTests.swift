import Foundation
import NetworkAgentTestServer
import NetworkAgentTestSupport
import NetworkAgentTesting
import Testing

@testable import NetworkAgent

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// An endpoint with its own response limit.
struct LimitEndpoint: NetworkAgentEndpoint {
    var baseURL: URL
    var path = "/"
    var method = HTTPMethod.get
    var task = HTTPTask.requestPlain
    var timeout: Duration? = .seconds(20)
    var maximumResponseBytes: Int?
}

/// Makes side requests through the agent, as a token refresh does: one before the call's own exchange (in
/// `intercept`) and one after it (in `onResponse`).
struct SideRequests: NetworkAgentPlugin {
    let side: LimitEndpoint
    var progress: TransferProgress.Handler?

    func intercept(
        _ request: URLRequest,
        endpoint: any NetworkAgentEndpoint,
        next: NetworkAgentExchange
    ) async throws -> (data: Data, response: URLResponse) {
        _ = try await next.agent.request(side, progress: progress)
        return try await next(request)
    }

    func onResponse(
        _ response: URLResponse,
        data: Data,
        request: URLRequest,
        endpoint: any NetworkAgentEndpoint,
        agent: NetworkAgent
    ) async throws -> (data: Data, response: URLResponse) {
        _ = try await agent.send(agent.urlRequest(for: side), progress: progress)
        return (data: data, response: response)
    }
}

@Suite("Transport limits: timeouts, response size, progress of side requests")
struct TransportLimitTests {
    static let limit = 64 << 10

    static func okServer() throws -> LoopbackServer {
        try LoopbackServer { _ in .text("ok") }
    }

    static func request(_ server: LoopbackServer, timeoutInterval: TimeInterval) -> URLRequest {
        var request = URLRequest(url: server.baseURL.appending(path: "x"))
        request.timeoutInterval = timeoutInterval
        return request
    }

    static func collect(_ body: HTTPByteStream) async throws -> Data {
        var data = Data()
        for try await chunk in body { data.append(chunk) }
        return data
    }

    // MARK: - 17.11 timeouts

    @Test("17.11 an infinite or huge timeoutInterval means no deadline", arguments: [.infinity, 1e11, 1e300])
    func hugeTimeoutIntervalMeansNoDeadline(interval: TimeInterval) async throws {
        // The server answers after 1.5 s: an interval that overflowed or was clamped into a short deadline (a
        // second or less, libcurl's whole-second idle timeout included) fails here instead of passing unnoticed.
        let answerDelay = Duration.milliseconds(1500)
        let server = try LoopbackServer { _ in ServerResponse(body: .data(Data("ok".utf8)), delay: answerDelay) }
        let transport = TestTransport.make()
        let started = ContinuousClock.now
        // Buffered and streamed at once, so the test waits for the delay once.
        async let sent = transport.send(Self.request(server, timeoutInterval: interval))
        async let streamed = transport.stream(Self.request(server, timeoutInterval: interval))
        let (data, response) = try await sent
        #expect((response as? HTTPURLResponse)?.statusCode == 200)
        #expect(String(decoding: data, as: UTF8.self) == "ok")
        let opened = try await streamed
        #expect(opened.statusCode == 200)
        #expect(String(decoding: try await Self.collect(opened.body), as: UTF8.self) == "ok")
        #expect(started.duration(to: .now) >= answerDelay, "the server answered before its delay")
        #expect(await eventually { (TestTransport.activeTransfers(of: transport) ?? 0) == 0 })
    }

    @Test("17.11 an endpoint timeout too long to convert means no deadline")
    func endpointTimeoutOfInt64MaxSecondsWorks() async throws {
        let server = try Self.okServer()
        let provider = NetworkAgentProvider<LimitEndpoint>(agent: NetworkAgent(transport: TestTransport.make()))
        let endpoint = LimitEndpoint(baseURL: server.baseURL, timeout: .seconds(Int64.max))
        let (data, _) = try await provider.request(endpoint: endpoint)
        #expect(String(decoding: data, as: UTF8.self) == "ok")
    }

    @Test(
        "17.11 a negative or NaN timeoutInterval is a typed error, sent nowhere",
        arguments: [-1, -.infinity, .nan] as [TimeInterval]
    )
    func negativeOrNaNTimeoutIntervalIsATypedError(interval: TimeInterval) async throws {
        let server = try Self.okServer()
        let transport = TestTransport.make()
        let direct = await #expect(throws: NetworkAgentError.self) {
            _ = try await transport.send(Self.request(server, timeoutInterval: interval))
        }
        #expect(direct?.code == .invalidTimeout)
        let streamed = await #expect(throws: NetworkAgentError.self) {
            _ = try await transport.stream(Self.request(server, timeoutInterval: interval))
        }
        #expect(streamed?.code == .invalidTimeout)
        // The agent checks before any transport, so a stub refuses it the same way.
        let stubbed = await #expect(throws: NetworkAgentError.self) {
            _ = try await NetworkAgent(transport: StubTransport()).send(Self.request(server, timeoutInterval: interval))
        }
        #expect(stubbed?.code == .invalidTimeout)
        #expect(server.requestCount == 0)
    }

    @Test("17.11 a negative endpoint timeout is a typed error")
    func negativeEndpointTimeoutIsATypedError() async throws {
        let server = try Self.okServer()
        let provider = NetworkAgentProvider<LimitEndpoint>(agent: NetworkAgent(transport: TestTransport.make()))
        let error = await #expect(throws: NetworkAgentError.self) {
            _ = try await provider.request(endpoint: LimitEndpoint(baseURL: server.baseURL, timeout: .seconds(-5)))
        }
        #expect(error?.code == .invalidTimeout)
        #expect(server.requestCount == 0)
    }

    // MARK: - 17.12 maximumResponseBytes

    @Test("17.12 the agent bounds response bodies by default")
    func defaultLimit() {
        #expect(
            NetworkAgentConfiguration().maximumResponseBytes == NetworkAgentConfiguration.defaultMaximumResponseBytes
        )
        #expect(NetworkAgentConfiguration.defaultMaximumResponseBytes == 256 << 20)
    }

    @Test("17.12 a body over maximumResponseBytes fails with responseTooLarge and the transfer stops at once")
    func bodyOverTheLimitStopsTheTransfer() async throws {
        let piece = Data(repeating: 0x61, count: 4 * Self.limit)
        // The rest of the body would come an hour later: only a client that gives up closes the connection in time.
        let server = try LoopbackServer { _ in ServerResponse(body: .chunked([piece, piece], interval: .seconds(3600)))
        }
        let agent = NetworkAgent(
            transport: TestTransport.make(),
            configuration: NetworkAgentConfiguration(maximumResponseBytes: Self.limit)
        )
        let seen = Locked(0)
        let error = await #expect(throws: NetworkAgentError.self) {
            _ = try await agent.request(
                LimitEndpoint(baseURL: server.baseURL),
                progress: { progress in seen.withLock { $0 = max($0, progress.bytesReceived) } }
            )
        }
        #expect(error?.code == .responseTooLarge)
        #expect(error?.statusCode == 200)
        #expect(await eventually { server.openConnectionCount == 0 })
        // Nothing past the limit was kept or reported.
        #expect(seen.withLock { $0 } <= Self.limit)
    }

    @Test("17.12 a streamed body delivers what came before the limit, then fails with responseTooLarge")
    func streamCrossingTheLimitFails() async throws {
        // Half the limit, then four times it twice, a second apart: the first piece is what came before the limit,
        // the second crosses it, and the third is still to come when the transport must give up (a transfer that
        // libcurl already read to its end would rightly keep its connection). Without a limit the whole body
        // arrives and the test fails, not hangs.
        let first = Data(repeating: 0x61, count: Self.limit / 2)
        let piece = Data(repeating: 0x62, count: 4 * Self.limit)
        let server = try LoopbackServer { _ in
            ServerResponse(body: .chunked([first, piece, piece], interval: .seconds(1)))
        }
        let provider = NetworkAgentProvider<LimitEndpoint>(
            agent: NetworkAgent(
                transport: TestTransport.make(),
                configuration: NetworkAgentConfiguration(maximumResponseBytes: nil)
            )
        )
        let received = Locked(0)
        let error = await #expect(throws: NetworkAgentError.self) {
            let stream = try await provider.stream(
                endpoint: LimitEndpoint(baseURL: server.baseURL, maximumResponseBytes: Self.limit)
            )
            for try await chunk in stream.body { received.withLock { $0 += chunk.count } }
        }
        #expect(error?.code == .responseTooLarge)
        // Every byte of the first piece was delivered (and of the second, only what fits under the limit).
        let delivered = received.withLock { $0 }
        #expect(delivered >= first.count && delivered <= Self.limit, "\(delivered) bytes delivered")
        #expect(await eventually { server.openConnectionCount == 0 })
    }

    @Test("17.12 a body of exactly maximumResponseBytes passes, buffered and streamed")
    func bodyAtTheLimitPasses() async throws {
        let body = Data((0..<Self.limit).map { UInt8(truncatingIfNeeded: $0) })
        let server = try LoopbackServer { _ in
            ServerResponse(body: .chunked([body.prefix(1000), body.dropFirst(1000)], interval: .zero))
        }
        let provider = NetworkAgentProvider<LimitEndpoint>(
            agent: NetworkAgent(
                transport: TestTransport.make(),
                configuration: NetworkAgentConfiguration(maximumResponseBytes: Self.limit)
            )
        )
        let (data, _) = try await provider.request(endpoint: LimitEndpoint(baseURL: server.baseURL))
        #expect(data == body)
        let stream = try await provider.stream(endpoint: LimitEndpoint(baseURL: server.baseURL))
        #expect(try await Self.collect(stream.body) == body)
    }

    @Test("17.12 an endpoint's maximumResponseBytes overrides the agent's, on any transport")
    func endpointLimitOverridesTheAgent() async throws {
        let server = try LoopbackServer { _ in ServerResponse(body: .data(Data(count: 1000))) }
        let stub = StubTransport(fallback: StubTransport.Response(body: Data(count: 1000)))
        for transport in [TestTransport.make(), stub] {
            for (agentLimit, endpointLimit, passes) in [(10, 1000, true), (10, 999, false), (nil, 999, false)] {
                let agent = NetworkAgent(
                    transport: transport,
                    configuration: NetworkAgentConfiguration(maximumResponseBytes: agentLimit)
                )
                let endpoint = LimitEndpoint(baseURL: server.baseURL, maximumResponseBytes: endpointLimit)
                if passes {
                    #expect(try await agent.request(endpoint).data.count == 1000)
                } else {
                    let error = await #expect(throws: NetworkAgentError.self) { try await agent.request(endpoint) }
                    #expect(error?.code == .responseTooLarge, "\(type(of: transport)) \(agentLimit ?? -1)")
                }
            }
        }
    }

    @Test("17.12 a streamed body from a transport without streaming of its own is held to the limit too")
    func defaultStreamOfACustomTransportIsBounded() async throws {
        let stub = StubTransport(fallback: StubTransport.Response(body: Data(count: 1000)))
        let server = try LoopbackServer { _ in ServerResponse(body: .data(Data(count: 1000))) }
        defer { server.stop() }
        for (limit, passes) in [(1000, true), (999, false)] {
            let provider = NetworkAgentProvider<LimitEndpoint>(
                agent: NetworkAgent(
                    transport: stub,
                    configuration: NetworkAgentConfiguration(maximumResponseBytes: limit)
                )
            )
            if passes {
                let stream = try await provider.stream(endpoint: LimitEndpoint(baseURL: server.baseURL))
                #expect(try await Self.collect(stream.body).count == 1000)
            } else {
                let error = await #expect(throws: NetworkAgentError.self) {
                    try await provider.stream(endpoint: LimitEndpoint(baseURL: server.baseURL))
                }
                #expect(error?.code == .responseTooLarge)
            }
        }
    }

    // MARK: - 17.13 progress of side requests

    static func sideAndMainServer(mainSize: Int, sideSize: Int) throws -> LoopbackServer {
        try LoopbackServer { request in
            ServerResponse(body: .data(Data(count: request.path == "/side" ? sideSize : mainSize)))
        }
    }

    @Test("17.13 side requests made by plugins do not report to the call's progress handler")
    func sideRequestsReportNoProgress() async throws {
        let (mainSize, sideSize) = (1000, 1 << 20)
        let server = try Self.sideAndMainServer(mainSize: mainSize, sideSize: sideSize)
        let side = LimitEndpoint(
            baseURL: server.baseURL,
            path: "/side",
            method: .post,
            task: .requestWithoutAttributes(content: Data(count: 512 << 10))
        )
        let provider = NetworkAgentProvider<LimitEndpoint>(
            plugins: [SideRequests(side: side)],
            agent: NetworkAgent(transport: TestTransport.make())
        )
        let seen = Locked<[TransferProgress]>([])
        let (data, _) = try await provider.request(
            endpoint: LimitEndpoint(baseURL: server.baseURL, path: "/main"),
            progress: { progress in seen.withLock { $0.append(progress) } }
        )
        #expect(data.count == mainSize)
        #expect(server.requests.map(\.path) == ["/side", "/main", "/side"])
        let progress = seen.withLock { $0 }
        #expect(!progress.isEmpty)
        #expect(progress.allSatisfy { $0.bytesSent == 0 && $0.bytesReceived <= mainSize })
        #expect(progress.last?.bytesReceived == mainSize)
    }

    @Test("17.13 a side request given its own progress handler reports to it alone")
    func sideRequestWithItsOwnHandler() async throws {
        let (mainSize, sideSize) = (1000, 1 << 20)
        let server = try Self.sideAndMainServer(mainSize: mainSize, sideSize: sideSize)
        let sideSeen = Locked<[Int]>([])
        let plugin = SideRequests(
            side: LimitEndpoint(baseURL: server.baseURL, path: "/side"),
            progress: { progress in sideSeen.withLock { $0.append(progress.bytesReceived) } }
        )
        let provider = NetworkAgentProvider<LimitEndpoint>(
            plugins: [plugin],
            agent: NetworkAgent(transport: TestTransport.make())
        )
        let mainSeen = Locked<[Int]>([])
        _ = try await provider.stream(
            endpoint: LimitEndpoint(baseURL: server.baseURL, path: "/main"),
            progress: { progress in mainSeen.withLock { $0.append(progress.bytesReceived) } }
        )
        #expect(mainSeen.withLock { $0 }.allSatisfy { $0 <= mainSize })
        // Both side requests reached their whole body. A transport may report the same byte count more than once
        // (CurlTransport does when the expected total arrives after the bytes), so count arrivals at the whole
        // body, not reports of it.
        let side = sideSeen.withLock { $0 }
        let arrivals = zip([0] + side, side).filter { previous, current in current == sideSize && previous != sideSize }
        #expect(arrivals.count == 2, "\(side)")
    }
}
