import Foundation
import NetworkAgent
import NetworkAgentAuth
import NetworkAgentTestServer
import NetworkAgentTestSupport
import NetworkAgentTesting
import NetworkAgentTokenRefresh
import Synchronization
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The refresher over the wire, against a server that issues short-lived tokens and counts refresh calls.
@Suite(.timeLimit(.minutes(1))) struct TokenRefreshTests {
    @Test func aHundredConcurrent401sShareOneRefresh() async throws {
        let server = try TokenServer(valid: [])
        defer { server.stop() }
        let refresher = TokenRefresher(
            token: AuthToken(credential: .bearer("t0"), refreshToken: "r0"),
            refresh: server.refreshCall()
        )
        let recorder = PathRecorder()
        let provider = NetworkAgentProvider<ApiEndpoint>(
            plugins: [
                recorder, .tokenRefresh(refresher), StartLine(100),
            ],
            agent: TestTransport.agent()
        )
        let endpoint = ApiEndpoint(baseURL: server.baseURL)

        let outcomes = try await withThrowingTaskGroup(of: (Int?, Int).self) { group in
            for _ in 0..<100 {
                group.addTask {
                    let log = EventRecorder()
                    let (_, response) = try await log.observing { try await provider.request(endpoint: endpoint) }
                    return (response.status, log.events(named: "request_retried").count)
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }

        #expect(server.refreshCalls == 1)
        #expect(outcomes.count == 100)
        #expect(outcomes.allSatisfy { $0.0 == 200 })
        #expect(outcomes.allSatisfy { $0.1 == 1 }, "each request retried exactly once")
        let api = server.apiRequests
        #expect(api.count == 200)
        #expect(api.filter { $0.header("Authorization") == "Bearer t0" }.count == 100)
        #expect(api.filter { $0.header("Authorization") == "Bearer t1" }.count == 100)
        // The refresh went through the agent, never through the chain.
        #expect(!recorder.all.contains("/refresh"))
        #expect(recorder.all.count == 100)
        #expect(await refresher.token?.refreshToken == "r1")
    }

    @Test func aRequestSentWithAnOldTokenIsRetriedWithoutANewRefresh() async throws {
        let server = try TokenServer(valid: ["t0"])
        defer { server.stop() }
        let refresher = TokenRefresher(token: AuthToken(credential: .bearer("t0")), refresh: server.refreshCall())
        let gate = PathGate(path: "/slow")
        let provider = NetworkAgentProvider<ApiEndpoint>(
            plugins: [.tokenRefresh(refresher), gate],
            agent: TestTransport.agent()
        )

        // The slow request leaves the refresher with t0 and is held before the network.
        let slowLog = EventRecorder()
        let slow = Task {
            try await slowLog.observing {
                try await provider.request(endpoint: ApiEndpoint(baseURL: server.baseURL, path: "/slow"))
            }
        }
        await gate.waitForArrival()
        // t0 expires; a fast request finds out and refreshes to t1.
        server.update { $0.valid = [] }
        let fastLog = EventRecorder()
        let (fast, _) = try await fastLog.observing {
            try await provider.request(endpoint: ApiEndpoint(baseURL: server.baseURL, path: "/fast"))
        }
        #expect(String(decoding: fast, as: UTF8.self) == "ok /fast t1")
        #expect(fastLog.events(named: "request_retried").map { $0.attributes["reason"] } == ["refreshed"])
        #expect(server.refreshCalls == 1)

        // Now the slow one goes out with t0, gets a 401, and is retried with t1 — no second refresh.
        await gate.open()
        let (slowData, slowResponse) = try await slow.value
        #expect(slowResponse.status == 200)
        #expect(String(decoding: slowData, as: UTF8.self) == "ok /slow t1")
        #expect(server.refreshCalls == 1)
        #expect(slowLog.events(named: "request_retried").map { $0.attributes["reason"] } == ["newer_credential"])
        #expect(slowLog.events(named: "refresh_started").isEmpty)
        #expect(
            server.apiRequests.filter { $0.path == "/slow" }.map { $0.header("Authorization") } == [
                "Bearer t0", "Bearer t1",
            ]
        )
    }

    @Test func aRefreshFailureFailsEveryWaiterWithTheSameErrorAndCallsTheHookOnce() async throws {
        let server = try TokenServer(valid: [])
        defer { server.stop() }
        server.update { $0.refreshFails = true }
        let hook = HookCounter()
        let refresher = TokenRefresher(
            token: AuthToken(credential: .bearer("t0")),
            onSessionExpired: hook.hook,
            refresh: server.refreshCall()
        )
        let provider = NetworkAgentProvider<ApiEndpoint>(
            plugins: [.tokenRefresh(refresher), StartLine(10)],
            agent: TestTransport.agent()
        )
        let endpoint = ApiEndpoint(baseURL: server.baseURL)
        let log = EventRecorder()

        let errors = await log.observing { await provider.concurrentErrors(10, endpoint: endpoint) }

        #expect(server.refreshCalls == 1)
        let failures = errors.compactMap { $0 as? TokenRefresher.Error }
        #expect(failures.count == 10)
        #expect(failures.allSatisfy { $0.code == .sessionExpired })
        // The token endpoint's `400 invalid_grant` ends the session. The one rejection carries the one response.
        let rejections = failures.compactMap { $0.underlying as? TokenRefresher.RefreshRejected }
        #expect(rejections.count == 10)
        #expect(rejections.allSatisfy { $0.oauthError == "invalid_grant" && $0.response?.statusCode == 400 })
        let causes = Set(rejections.compactMap { $0.response.map(ObjectIdentifier.init) })
        #expect(causes.count == 1, "every waiter got the one error of the one refresh")
        #expect(log.events(named: "refresh_failed").map { $0.attributes["error"] } == ["RefreshRejected"])
        #expect(try await waitUntil { hook.calls.count == 1 })
        #expect(await refresher.isSessionExpired)

        // Later requests fail at once, with the same error, without touching the network.
        let sentBefore = server.requests.count
        let later = await #expect(throws: TokenRefresher.Error.self) {
            try await provider.request(endpoint: endpoint)
        }
        #expect(
            (later?.underlying as? TokenRefresher.RefreshRejected)?.response.map(ObjectIdentifier.init) == causes.first
        )
        #expect(server.requests.count == sentBefore)
        #expect(hook.calls.count == 1)

        // A new sign-in starts a new session.
        server.update { $0.valid = ["fresh"] }
        await refresher.setToken(AuthToken(credential: .bearer("fresh")))
        let (data, _) = try await provider.request(endpoint: endpoint)
        #expect(String(decoding: data, as: UTF8.self) == "ok /data fresh")
    }

    @Test func aServerThatAlwaysAnswers401GetsBoundedRefreshesThenAClearError() async throws {
        let server = try TokenServer(valid: [])
        defer { server.stop() }
        server.update { $0.rejectsEverything = true }
        let clock = ManualClock(startDate: Date())
        let refresher = TokenRefresher(
            token: AuthToken(credential: .bearer("t0")),
            maximumRefreshes: 3,
            refreshWindow: .seconds(20),
            now: { clock.date },
            refresh: server.refreshCall(now: { clock.date })
        )
        let provider = NetworkAgentProvider<ApiEndpoint>(
            plugins: [.tokenRefresh(refresher)],
            agent: TestTransport.agent()
        )
        let endpoint = ApiEndpoint(baseURL: server.baseURL)

        for _ in 0..<3 {
            // Refreshed, retried once, rejected again: the second 401 is returned as it is.
            let (_, response) = try await provider.request(endpoint: endpoint)
            #expect(response.status == 401)
        }
        #expect(server.refreshCalls == 3)
        for _ in 0..<2 {
            let error = await #expect(throws: TokenRefresher.Error.self) {
                try await provider.request(endpoint: endpoint)
            }
            #expect(error?.code == .refreshLimitReached)
        }
        #expect(server.refreshCalls == 3)
        #expect(await !refresher.isSessionExpired)

        // Once the window has passed (in virtual time), refreshing is allowed again. (The tokens live 60 s, so
        // 21 s later none is due for a proactive refresh.)
        clock.advance(by: .seconds(21))
        let (_, response) = try await provider.request(endpoint: endpoint)
        #expect(response.status == 401)
        #expect(server.refreshCalls == 4)
    }

    @Test func aProactiveRefreshHappensBeforeTheServerWouldAnswer401() async throws {
        let clock = ManualClock(startDate: Date())
        let jwt = makeJWT(exp: clock.date.timeIntervalSince1970 + 100)
        let server = try TokenServer(valid: [jwt])
        defer { server.stop() }
        let refresher = TokenRefresher(
            token: .bearer(jwt: jwt),
            refreshMargin: .seconds(30),
            now: { clock.date },
            refresh: server.refreshCall(now: { clock.date })
        )
        let provider = NetworkAgentProvider<ApiEndpoint>(
            plugins: [.tokenRefresh(refresher)],
            agent: TestTransport.agent()
        )
        let endpoint = ApiEndpoint(baseURL: server.baseURL)

        _ = try await provider.request(endpoint: endpoint)
        #expect(server.refreshCalls == 0)

        clock.advance(by: .seconds(75))  // 25 s before expiry: inside the 30 s margin
        let log = EventRecorder()
        let (data, response) = try await log.observing { try await provider.request(endpoint: endpoint) }
        #expect(response.status == 200)
        #expect(String(decoding: data, as: UTF8.self) == "ok /data t1")
        #expect(server.refreshCalls == 1)
        #expect(server.rejections == 0)
        #expect(log.events(named: "refresh_started").map { $0.attributes["reason"] } == ["proactive"])
        #expect(log.events(named: "request_retried").isEmpty)
        #expect(server.apiRequests.map { $0.header("Authorization") } == ["Bearer \(jwt)", "Bearer t1"])
    }

    @Test func theRetriedRequestKeepsHeadersAddedByOtherPlugins() async throws {
        let server = try TokenServer(valid: [])
        defer { server.stop() }
        let refresher = TokenRefresher(token: AuthToken(credential: .bearer("t0")), refresh: server.refreshCall())
        let provider = NetworkAgentProvider<ApiEndpoint>(
            plugins: [
                HeaderSetter(name: "X-Outer", value: "o"),
                .tokenRefresh(refresher),
                HeaderSetter(name: "X-Inner", value: "i"),
                AttemptStamper(),
            ],
            agent: TestTransport.agent()
        )
        let (_, response) = try await provider.request(endpoint: ApiEndpoint(baseURL: server.baseURL))
        #expect(response.status == 200)
        let sent = server.apiRequests
        #expect(sent.map { $0.header("Authorization") } == ["Bearer t0", "Bearer t1"])
        #expect(sent.map { $0.header("X-Outer") } == ["o", "o"])
        #expect(sent.map { $0.header("X-Inner") } == ["i", "i"])
        #expect(sent.map { $0.header("X-Attempt") } == ["1", "2"])
        #expect(sent.map { $0.header("Accept") } == ["application/json", "application/json"])
    }

    @Test func cancellingOneWaiterDoesNotCancelTheSharedRefresh() async throws {
        let server = try TokenServer(valid: [], holdsRefresh: true)
        defer { server.stop() }
        let refresher = TokenRefresher(token: AuthToken(credential: .bearer("t0")), refresh: server.refreshCall())
        let provider = NetworkAgentProvider<ApiEndpoint>(
            plugins: [.tokenRefresh(refresher), StartLine(2)],
            agent: TestTransport.agent()
        )
        let endpoint = ApiEndpoint(baseURL: server.baseURL)
        let first = Task { try await provider.request(endpoint: endpoint) }
        let second = Task { try await provider.request(endpoint: endpoint) }

        // Both were rejected and wait for the one refresh, which the server holds.
        #expect(try await waitUntil { await refresher.waitingCount == 2 && server.refreshCalls == 1 })

        first.cancel()
        let cancelled = await #expect(throws: NetworkAgentError.self) { try await first.value }
        #expect(cancelled?.code == .cancelled)
        #expect(await refresher.waitingCount == 1)

        server.releaseRefresh()
        let (data, _) = try await second.value
        #expect(String(decoding: data, as: UTF8.self) == "ok /data t1")
        #expect(server.refreshCalls == 1)
        #expect(await refresher.token?.credential == .bearer("t1"))
    }

    @Test func cancellingEveryWaiterStillCompletesTheRefresh() async throws {
        let server = try TokenServer(valid: [], holdsRefresh: true)
        defer { server.stop() }
        let refresher = TokenRefresher(token: AuthToken(credential: .bearer("t0")), refresh: server.refreshCall())
        let provider = NetworkAgentProvider<ApiEndpoint>(
            plugins: [.tokenRefresh(refresher)],
            agent: TestTransport.agent()
        )
        let only = Task { try await provider.request(endpoint: ApiEndpoint(baseURL: server.baseURL)) }
        #expect(try await waitUntil { await refresher.waitingCount == 1 && server.refreshCalls == 1 })
        only.cancel()
        await #expect(throws: NetworkAgentError.self) { try await only.value }

        server.releaseRefresh()
        #expect(try await waitUntil { await refresher.token?.credential == .bearer("t1") })
        #expect(server.refreshCalls == 1)
    }

    @Test func signingInDuringARefreshStartsANewSession() async throws {
        let server = try TokenServer(valid: [], holdsRefresh: true)
        defer { server.stop() }
        let refresher = TokenRefresher(token: AuthToken(credential: .bearer("t0")), refresh: server.refreshCall())
        let provider = NetworkAgentProvider<ApiEndpoint>(
            plugins: [.tokenRefresh(refresher)],
            agent: TestTransport.agent()
        )
        let endpoint = ApiEndpoint(baseURL: server.baseURL)
        let waiting = Task { try await provider.request(endpoint: endpoint) }
        #expect(try await waitUntil { await refresher.waitingCount == 1 && server.refreshCalls == 1 })

        server.update { $0.valid = ["signed-in"] }
        await refresher.setToken(AuthToken(credential: .bearer("signed-in")))
        // The request of the old session is not upgraded to the new session's token: its 401 comes back.
        let (_, rejected) = try await waiting.value
        #expect(rejected.status == 401)
        #expect(server.apiRequests.map { $0.header("Authorization") } == ["Bearer t0"])

        // The superseded refresh (cancelled by the sign-in) ends, and its outcome is ignored: no expired session,
        // no replaced token.
        server.releaseRefresh()
        #expect(try await waitUntil { await refresher.finishedRefreshes == 1 && server.issued == 1 })
        #expect(await refresher.token?.credential == .bearer("signed-in"))
        #expect(await !refresher.isSessionExpired)

        // (The test server invalidated every token when it answered the superseded refresh.)
        server.update { $0.valid = ["signed-in"] }
        let (data, _) = try await provider.request(endpoint: endpoint)
        #expect(String(decoding: data, as: UTF8.self) == "ok /data signed-in")
    }

    @Test func endpointsThatOptOutOrBringTheirOwnAuthorizationAreNotRefreshed() async throws {
        let server = try TokenServer(valid: [])
        defer { server.stop() }
        let refresher = TokenRefresher(token: AuthToken(credential: .bearer("t0")), refresh: server.refreshCall())
        let provider = NetworkAgentProvider<ApiEndpoint>(
            plugins: [.tokenRefresh(refresher)],
            agent: TestTransport.agent()
        )
        let optedOut = ApiEndpoint(baseURL: server.baseURL, authorization: .none)
        let (_, first) = try await provider.request(endpoint: optedOut)
        #expect(first.status == 401)
        let own = ApiEndpoint(baseURL: server.baseURL, headers: ["Authorization": "Bearer mine"])
        let (_, second) = try await provider.request(endpoint: own)
        #expect(second.status == 401)
        #expect(server.refreshCalls == 0)
        #expect(server.apiRequests.map { $0.header("Authorization") } == [nil, "Bearer mine"])
    }

    @Test func anotherOriginNeverReceivesTheToken() async throws {
        let server = try TokenServer(valid: ["t0"])
        defer { server.stop() }
        let other = try LoopbackServer { request in .text(request.header("Authorization") ?? "none") }
        let refresher = TokenRefresher(token: AuthToken(credential: .bearer("t0")), refresh: server.refreshCall())
        /// Points the request at the other server after the token was added, as a late mirror plugin would.
        struct LateMirror: NetworkAgentPlugin {
            let target: URL
            func onRequest(_ request: URLRequest, endpoint: any NetworkAgentEndpoint) async throws -> URLRequest {
                var request = request
                request.url = target
                return request
            }
        }
        let provider = NetworkAgentProvider<ApiEndpoint>(
            plugins: [
                LateMirror(target: other.baseURL), .tokenRefresh(refresher),
            ],
            agent: TestTransport.agent()
        )
        let (data, _) = try await provider.request(endpoint: ApiEndpoint(baseURL: server.baseURL))
        #expect(String(decoding: data, as: UTF8.self) == "none")
    }
}

extension TokenServer {
    /// How many tokens `/refresh` issued.
    var issued: Int { shared.state.withLock { $0.issued } }
}
