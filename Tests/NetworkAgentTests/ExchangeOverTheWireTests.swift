import Foundation
import NetworkAgent
import NetworkAgentTestServer
import NetworkAgentTestSupport
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The exchange hook with the real transport and a loopback server: what a retry or a timer plugin needs.
@Suite struct ExchangeOverTheWireTests {
    @Test func aPluginRetriesA503OverTheWire() async throws {
        let calls = Locked(0)
        let server = try LoopbackServer { _ in
            calls.withLock {
                $0 += 1; return $0
            } < 3 ? .text("busy", status: 503) : .text("ok")
        }
        let timer = AttemptTimer()
        let provider = NetworkAgentProvider<TestEndpoint>(
            plugins: [NaiveRetry(attempts: 3), timer],
            agent: TestTransport.agent()
        )
        let (data, response) = try await provider.request(endpoint: TestEndpoint(baseURL: server.baseURL, path: "/"))
        #expect((response as? HTTPURLResponse)?.statusCode == 200)
        #expect(String(decoding: data, as: UTF8.self) == "ok")
        #expect(server.requestCount == 3)
        #expect(timer.durations.withLock { $0.count } == 3)
    }

    @Test func aPluginRetriesARefusedConnectionOverTheWire() async throws {
        // Find a free port, then close it: the first attempt is refused.
        let probe = try LoopbackServer { _ in .text("") }
        let port = probe.port
        probe.stop()

        /// Starts the server on the refused port after the first failure, then retries.
        final class RestartThenRetry: NetworkAgentPlugin {
            let port: Int
            let started = Locked<LoopbackServer?>(nil)
            let errors = Locked<[NetworkAgentError]>([])

            init(port: Int) { self.port = port }

            func intercept(
                _ request: URLRequest,
                endpoint: any NetworkAgentEndpoint,
                next: NetworkAgentExchange
            )
                async throws -> (data: Data, response: URLResponse)
            {
                do {
                    return try await next(request)
                } catch let error as NetworkAgentError where error.code == .transport {
                    errors.withLock { $0.append(error) }
                    let server = try LoopbackServer(port: port) { _ in .text("back") }
                    started.withLock { $0 = server }
                    return try await next(request)
                }
            }
        }
        let plugin = RestartThenRetry(port: port)
        let provider = NetworkAgentProvider<TestEndpoint>(plugins: [plugin], agent: TestTransport.agent())
        let base = URL(string: "http://127.0.0.1:\(port)")!
        let (data, _) = try await provider.request(endpoint: TestEndpoint(baseURL: base, path: "/"))
        #expect(String(decoding: data, as: UTF8.self) == "back")
        #expect(plugin.errors.withLock { $0.map(\.urlErrorCode) } == [.cannotConnectToHost])
        plugin.started.withLock { $0?.stop() }
    }

    @Test func seedPluginsKeepTheirOrderOverTheWire() async throws {
        let server = try LoopbackServer { request in .text(request.header("X-Tags") ?? "") }
        let log = HookLog()
        let provider = NetworkAgentProvider<TestEndpoint>(
            plugins: [
                Tagger(name: "A", log: log), Tagger(name: "B", log: log), Tagger(name: "C", log: log),
            ],
            agent: TestTransport.agent()
        )
        let (data, _) = try await provider.request(endpoint: TestEndpoint(baseURL: server.baseURL, path: "/"))
        #expect(String(decoding: data, as: UTF8.self) == "A,B,CABC")
        #expect(
            log.all.filter { $0.hasPrefix("response") } == [
                "response A body=A,B,C", "response B body=A,B,CA", "response C body=A,B,CAB",
            ]
        )
    }

    @Test func theTransportReportsTimeToResponseHeaders() async throws {
        // The head and the first byte at once, the rest of the body 1.5 s later: time to headers is well under a
        // second, the whole exchange at least 1.5 s, so a transport that reported the total would fail here.
        let bodyDelay = Duration.milliseconds(1500)
        let server = try LoopbackServer { _ in
            ServerResponse(body: .chunked([Data("a".utf8), Data("b".utf8)], interval: bodyDelay))
        }
        let collector = EventTests.Collector()
        let provider = NetworkAgentProvider<TestEndpoint>(plugins: [collector], agent: TestTransport.agent())
        let started = ContinuousClock.now
        let (data, _) = try await provider.request(endpoint: TestEndpoint(baseURL: server.baseURL, path: "/"))
        let total = started.duration(to: .now)
        #expect(String(decoding: data, as: UTF8.self) == "ab")
        #expect(total >= bodyDelay, "the exchange took \(total), less than the body's delay")
        let events = collector.events.withLock { $0 }
        #expect(events.map(\.name) == ["response_headers"])
        let seconds = try #require(events.first?.attributes["seconds"].flatMap(Double.init))
        #expect(seconds > 0 && seconds < 1, "time to headers \(seconds) s of a \(total) exchange")
        guard case .responseHeaders(let after) = events.first?.kind else {
            Issue.record("not a typed response headers event: \(events)")
            return
        }
        #expect(after > .zero && after < .seconds(1), "time to headers \(after) of a \(total) exchange")
    }
}
