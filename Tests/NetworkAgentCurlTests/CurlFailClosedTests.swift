import CCurl
import Foundation
import NetworkAgent
import NetworkAgentTestServer
import Testing

@testable import NetworkAgentCurl

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Every option's result is checked. libcurl 7.88 with OpenSSL accepts every option this transport sets, so the
/// refusals (`CURLE_NOT_BUILT_IN` for pinning on some TLS backends, say) and the failing multi calls come from the
/// engine's hooks; the requests, the server and everything else are real.
@Suite struct CurlFailClosedTests {
    /// A transport whose libcurl answers `code` to `refused` while `refusing` holds, and the lines it logs.
    static func transport(
        refusing option: CURLoption,
        with code: CURLcode = CURLE_NOT_BUILT_IN,
        while refusing: Locked<Bool> = Locked(true),
        configuration: CurlTransport.Configuration = .init()
    ) -> (CurlTransport, Locked<[String]>) {
        let log = Locked<[String]>([])
        var hooks = CurlEngine.Hooks()
        hooks.optionResult = { asked in
            asked == option && refusing.withLock { $0 } ? code : nil
        }
        hooks.log = { line in log.withLock { $0.append(line) } }
        return (CurlTransport(configuration: configuration, hooks: hooks), log)
    }

    @Test(
        "a refused security option fails the request before anything is sent",
        arguments: [
            CURLOPT_PINNEDPUBLICKEY, CURLOPT_CAINFO, CURLOPT_SSL_VERIFYPEER, CURLOPT_SSL_VERIFYHOST,
            CURLOPT_PROTOCOLS, CURLOPT_FOLLOWLOCATION, CURLOPT_PROXY,
        ]
    )
    func aRefusedSecurityOptionFailsClosed(option: CURLoption) async throws {
        let server = try LoopbackServer { _ in .text("sent") }
        // The options set only when configured are configured (`""` turns proxies off, the environment's too).
        let refusing = Locked(true)
        let (transport, _) = Self.transport(
            refusing: option,
            while: refusing,
            configuration: .init(
                caBundle: URL(fileURLWithPath: "/etc/ssl/certs/ca-certificates.crt"),
                pinnedPublicKey: "sha256//47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=",
                proxy: ""
            )
        )
        let error = await networkError { _ = try await transport.send(request(server, "/secret")) }
        #expect(error?.code == .transport)
        let facts = error?.curlError
        #expect(facts?.code == .optionRefused)
        #expect(facts?.option == CurlOptions.name(of: option))
        #expect(facts?.curlCode == Int(CURLE_NOT_BUILT_IN.rawValue))
        #expect(error?.urlErrorCode == nil, "not a network failure: the retry plugin must not retry it")
        #expect(server.requestCount == 0 && server.connectionCount == 0)
        #expect(transport.activeTransferCount == 0)
        // The handle went back clean: the same transport sends once libcurl accepts the option.
        refusing.withLock { $0 = false }
        let (text, _) = try await transport.text(request(server, "/after"))
        #expect(text == "sent")
    }

    @Test func aRefusedTuningOptionIsLoggedOnceAndTheRequestsGoOn() async throws {
        let server = try LoopbackServer { request in .text(request.path) }
        let (transport, log) = Self.transport(refusing: CURLOPT_HTTP_VERSION, with: CURLE_UNKNOWN_OPTION)
        for index in 0..<3 {
            let (text, _) = try await transport.text(request(server, "/\(index)"))
            #expect(text == "/\(index)")
        }
        let lines = log.withLock { $0 }
        #expect(lines.count == 1, "\(lines)")
        #expect(lines.first?.contains("CURLOPT_HTTP_VERSION") == true)
        #expect(lines.first?.contains("libcurl error \(CURLE_UNKNOWN_OPTION.rawValue)") == true)
    }

    @Test(
        "a failing multi call fails the transfers in flight with its error, without spinning",
        .timeLimit(.minutes(1)),
        arguments: [CurlEngine.MultiCall.perform, .poll]
    )
    func aFailingMultiCallFailsTheTransfers(call: CurlEngine.MultiCall) async throws {
        let server = try LoopbackServer { request in
            request.path == "/stall" ? ServerResponse(fault: .stall) : .text("ok")
        }
        let failing = Locked(false)
        let calls = Locked(0)
        var hooks = CurlEngine.Hooks()
        hooks.multiResult = { made in
            guard made == call, failing.withLock({ $0 }) else { return nil }
            calls.withLock { $0 += 1 }
            return CURLM_INTERNAL_ERROR
        }
        let transport = CurlTransport(configuration: .init(), hooks: hooks)
        let stalled = Task { try await transport.send(request(server, "/stall", timeout: 8)) }
        #expect(await eventually { server.requestCount == 1 })
        failing.withLock { $0 = true }
        let started = ContinuousClock.now
        let result = await stalled.result
        guard case .failure(let error as NetworkAgentError) = result else {
            Issue.record("expected a NetworkAgentError, got \(result)")
            return
        }
        #expect(started.duration(to: .now) < .seconds(3), "failed at once, not at the deadline")
        #expect(error.code == .transport)
        #expect(error.curlError?.code == .engineFailed)
        #expect(error.curlError?.curlMultiCode == Int(CURLM_INTERNAL_ERROR.rawValue))
        // A broken handle must not spin the engine thread: count the calls over one second.
        let before = calls.withLock { $0 }
        try await Task.sleep(for: .seconds(1))
        let made = calls.withLock { $0 } - before
        #expect(made < 30, "\(made) failing \(call) calls in one second")
        failing.withLock { $0 = false }
        let (text, _) = try await transport.text(request(server, "/after"))
        #expect(text == "ok")
    }
}
