import Foundation
import NetworkAgent
import NetworkAgentAuth
import NetworkAgentTestServer
import NetworkAgentTestSupport
import NetworkAgentTesting
import NetworkAgentTokenRefresh
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Which refresh failures end a session (issue 17.7) and which refreshes spend the loop guard (17.8).
@Suite(.timeLimit(.minutes(1))) struct RefreshFailureTests {
    /// A failure of the token endpoint that says nothing about the refresh token.
    enum TransientFailure: String, CaseIterable, Sendable {
        /// The token endpoint does not answer within the refresh request's timeout.
        case timeout
        /// Nothing listens where the token endpoint should be.
        case offline
        /// The token endpoint answers `503`.
        case serverError
    }

    /// Whether `NetworkAgentRetry`'s default policy retries the error. (This test target cannot import the retry
    /// plugin; the sets are `RetryPlugin.defaultRetryableURLErrorCodes` and `retriesTimeouts: true`.)
    static func isRetriedByDefault(_ error: NetworkAgentError) -> Bool {
        if error.code == .timedOut { return true }
        let retryable: Set<URLError.Code> = [
            .timedOut, .cannotConnectToHost, .networkConnectionLost, .badServerResponse, .cannotFindHost,
            .dnsLookupFailed, .notConnectedToInternet,
        ]
        return error.code == .transport && error.urlErrorCode.map(retryable.contains) == true
    }

    @Test(
        "17.7 a timeout, no connection or a 5xx from the token endpoint keeps the session",
        arguments: TransientFailure.allCases
    )
    func transientRefreshFailuresKeepTheSession(failure: TransientFailure) async throws {
        let server = try TokenServer(valid: [], holdsRefresh: failure == .timeout)
        defer { server.stop() }
        let closed = try LoopbackServer { _ in .text("never") }
        closed.stop()
        let target = Locked(failure == .offline ? closed.baseURL : server.baseURL)
        if failure == .serverError {
            server.update { $0.refreshAnswer = (503, #"{"error":"temporarily_unavailable"}"#) }
        }
        let hook = HookCounter()
        let original = AuthToken(credential: .bearer("t0"), refreshToken: "r0")
        let call = server.refreshCall(
            timeout: failure == .timeout ? .seconds(1) : nil,
            base: { target.withLock { $0 } }
        )
        // The first refresh starts once the three rejected requests all wait for it, so that they share it however
        // fast it fails; the later ones start at once.
        let shared = Locked<TokenRefresher?>(nil)
        let refresher = TokenRefresher(
            token: original,
            onSessionExpired: hook.hook,
            refresh: { agent, current in
                let first = shared.withLock { value -> TokenRefresher? in
                    defer { value = nil }
                    return value
                }
                if let first {
                    _ = try await waitUntil { await first.waitingCount >= 3 }
                }
                return try await call(agent, current)
            }
        )
        shared.withLock { $0 = refresher }
        // The default loop guard: a failed refresh issued no token, so it is no step of a refresh loop.
        #expect(await refresher.maximumRefreshes == TokenRefresher.defaultMaximumRefreshes)
        let provider = NetworkAgentProvider<ApiEndpoint>(
            plugins: [.tokenRefresh(refresher), StartLine(3)],
            agent: TestTransport.agent()
        )
        let endpoint = ApiEndpoint(baseURL: server.baseURL)
        let log = EventRecorder()

        var errors = await log.observing { await provider.concurrentErrors(3, endpoint: endpoint) }
        // The three 401s shared one refresh.
        #expect(log.events(named: "refresh_started").count == 1)
        #expect(errors.count == 3)
        // The token endpoint stays down for as many more rejected requests as the default guard allows refreshes:
        // each refreshes again, and fails the same way. None is refused by the loop guard.
        for _ in 0..<TokenRefresher.defaultMaximumRefreshes {
            errors += await log.observing { await provider.concurrentErrors(1, endpoint: endpoint) }
        }
        let started = log.events(named: "refresh_started").count
        #expect(started == 1 + TokenRefresher.defaultMaximumRefreshes)
        #expect(log.events(named: "refresh_limit_reached").isEmpty)

        // Every waiter fails with the refresh's own transport error, one the retry plugin retries.
        for error in errors {
            let agentError = try #require(error as? NetworkAgentError, "\(String(describing: error))")
            #expect(Self.isRetriedByDefault(agentError), "\(agentError)")
            switch failure {
            case .timeout: #expect(agentError.code == .timedOut)
            case .offline: #expect(agentError.urlErrorCode == .cannotConnectToHost)
            case .serverError:
                #expect(agentError.urlErrorCode == .badServerResponse)
                #expect(agentError.statusCode == 503)
            }
        }
        #expect(
            log.events(named: "refresh_failed").map { $0.attributes["session_expired"] }
                == Array(repeating: "false", count: started)
        )
        #expect(
            log.events(named: "refresh_failed").map(\.kind)
                == Array(repeating: .tokenRefresh(succeeded: false), count: started)
        )
        // The session and its refresh token are kept; nobody was signed out.
        #expect(await !refresher.isSessionExpired)
        #expect(await refresher.token == original)
        #expect(hook.calls.isEmpty)

        // The token endpoint is back: the next request refreshes and succeeds.
        server.releaseRefresh()
        server.update { $0.refreshAnswer = nil }
        target.withLock { $0 = server.baseURL }
        // The test server still answers the refreshes that timed out, issuing (and invalidating) tokens nobody got.
        if failure == .timeout { #expect(try await waitUntil { server.issued == started }) }
        let issued = server.issued + 1
        let (data, response) = try await provider.request(endpoint: endpoint)
        #expect(response.status == 200)
        #expect(String(decoding: data, as: UTF8.self) == "ok /data t\(issued)")
        #expect(await refresher.token?.refreshToken == "r\(issued)")
        #expect(hook.calls.isEmpty)
    }

    @Test("17.7 the default loop guard still stops a server that rejects every fresh token")
    func theDefaultLoopGuardStopsARefreshLoop() async throws {
        let server = try TokenServer(valid: [])
        defer { server.stop() }
        let refresher = TokenRefresher(
            token: AuthToken(credential: .bearer("t0"), refreshToken: "r0"),
            refresh: server.refreshCall()
        )
        let provider = NetworkAgentProvider<ApiEndpoint>(
            plugins: [.tokenRefresh(refresher)],
            agent: TestTransport.agent()
        )
        let endpoint = ApiEndpoint(baseURL: server.baseURL)
        // The token endpoint fails twice first: those refreshes issue nothing and leave the guard whole.
        server.update { $0.refreshAnswer = (503, #"{"error":"temporarily_unavailable"}"#) }
        for _ in 0..<2 {
            await #expect(throws: NetworkAgentError.self) { try await provider.request(endpoint: endpoint) }
        }
        // Then it issues tokens the API rejects at once: refreshed, retried, rejected again, until the default limit.
        server.update {
            $0.refreshAnswer = nil
            $0.rejectsEverything = true
        }
        for _ in 0..<TokenRefresher.defaultMaximumRefreshes {
            let (_, response) = try await provider.request(endpoint: endpoint)
            #expect(response.status == 401)
        }
        let error = await #expect(throws: TokenRefresher.Error.self) { try await provider.request(endpoint: endpoint) }
        #expect(error?.code == .refreshLimitReached)
        #expect(server.refreshCalls == 2 + TokenRefresher.defaultMaximumRefreshes)
        #expect(await !refresher.isSessionExpired)
    }

    /// A definitive rejection of the refresh.
    enum Rejection: String, CaseIterable, Sendable {
        /// `400 {"error":"invalid_grant"}` (RFC 6749 §5.2).
        case invalidGrant400
        /// `401 {"error":"invalid_grant"}`.
        case invalidGrant401
        /// The refresh call throws `TokenRefresher.RefreshRejected` itself.
        case thrown
    }

    @Test("17.7 invalid_grant or RefreshRejected ends the session once", arguments: Rejection.allCases)
    func definitiveRejectionsEndTheSessionOnce(rejection: Rejection) async throws {
        let server = try TokenServer(valid: [])
        defer { server.stop() }
        switch rejection {
        case .invalidGrant400: server.update { $0.refreshAnswer = (400, #"{"error":"invalid_grant"}"#) }
        case .invalidGrant401: server.update { $0.refreshAnswer = (401, #"{"error":"invalid_grant"}"#) }
        case .thrown: break
        }
        let hook = HookCounter()
        let call = server.refreshCall()
        let refresher = TokenRefresher(
            token: AuthToken(credential: .bearer("t0"), refreshToken: "r0"),
            onSessionExpired: hook.hook,
            refresh: { agent, current in
                if rejection == .thrown { throw TokenRefresher.RefreshRejected("the user revoked this device") }
                return try await call(agent, current)
            }
        )
        let provider = NetworkAgentProvider<ApiEndpoint>(
            plugins: [.tokenRefresh(refresher), StartLine(3)],
            agent: TestTransport.agent()
        )
        let endpoint = ApiEndpoint(baseURL: server.baseURL)
        let log = EventRecorder()

        let errors = await log.observing { await provider.concurrentErrors(3, endpoint: endpoint) }

        let failures = errors.compactMap { $0 as? TokenRefresher.Error }
        #expect(failures.count == 3)
        #expect(failures.allSatisfy { $0.code == .sessionExpired })
        let reasons = failures.compactMap { $0.underlying as? TokenRefresher.RefreshRejected }
        #expect(reasons.count == 3)
        if rejection != .thrown { #expect(reasons.allSatisfy { $0.oauthError == "invalid_grant" }) }
        #expect(log.events(named: "refresh_failed").map { $0.attributes["session_expired"] } == ["true"])
        #expect(try await waitUntil { hook.calls.count == 1 })
        #expect(await refresher.isSessionExpired)

        // Later requests fail at once; the hook is not called again.
        let later = await #expect(throws: TokenRefresher.Error.self) { try await provider.request(endpoint: endpoint) }
        #expect(later?.code == .sessionExpired)
        #expect(log.events(named: "refresh_started").count == 1)
        #expect(hook.calls.count == 1)
    }

    @Test("17.7 an error that is neither a rejection nor a transport failure keeps the session")
    func otherRefreshErrorsKeepTheSession() async throws {
        let server = try TokenServer(valid: [])
        defer { server.stop() }
        // 400 invalid_client: the app's client credentials are wrong, not the user's refresh token.
        server.update { $0.refreshAnswer = (400, #"{"error":"invalid_client"}"#) }
        let hook = HookCounter()
        let refresher = TokenRefresher(
            token: AuthToken(credential: .bearer("t0"), refreshToken: "r0"),
            onSessionExpired: hook.hook,
            refresh: server.refreshCall()
        )
        let provider = NetworkAgentProvider<ApiEndpoint>(
            plugins: [.tokenRefresh(refresher)],
            agent: TestTransport.agent()
        )
        let endpoint = ApiEndpoint(baseURL: server.baseURL)
        let error = await #expect(throws: NetworkAgentError.self) { try await provider.request(endpoint: endpoint) }
        #expect(error?.code == .unacceptableStatus)
        #expect(error?.statusCode == 400)
        #expect(error.map(Self.isRetriedByDefault) == false)
        #expect(await !refresher.isSessionExpired)
        #expect(hook.calls.isEmpty)

        server.update { $0.refreshAnswer = nil }
        let (data, _) = try await provider.request(endpoint: endpoint)
        #expect(String(decoding: data, as: UTF8.self) == "ok /data t1")
    }

    @Test("17.7 a proactive refresh that fails transiently sends the current token")
    func aFailedProactiveRefreshSendsTheCurrentToken() async throws {
        let clock = ManualClock(startDate: Date())
        let server = try TokenServer(valid: ["t0"])
        defer { server.stop() }
        server.update { $0.refreshAnswer = (503, "{}") }
        let hook = HookCounter()
        let refresher = TokenRefresher(
            token: AuthToken(credential: .bearer("t0"), expiresAt: clock.date.addingTimeInterval(60)),
            refreshMargin: .seconds(30),
            now: { clock.date },
            onSessionExpired: hook.hook,
            refresh: server.refreshCall(now: { clock.date })
        )
        let provider = NetworkAgentProvider<ApiEndpoint>(
            plugins: [.tokenRefresh(refresher)],
            agent: TestTransport.agent()
        )
        let endpoint = ApiEndpoint(baseURL: server.baseURL)

        clock.advance(by: .seconds(45))  // 15 s before expiry: due for a proactive refresh, still valid
        let (data, _) = try await provider.request(endpoint: endpoint)
        #expect(String(decoding: data, as: UTF8.self) == "ok /data t0")
        #expect(server.refreshCalls == 1)
        // One proactive attempt per token: the next request does not hammer the failing token endpoint.
        _ = try await provider.request(endpoint: endpoint)
        #expect(server.refreshCalls == 1)
        #expect(hook.calls.isEmpty)

        // Once it really expired, the 401 refreshes it.
        server.update {
            $0.refreshAnswer = nil
            $0.valid = []
        }
        clock.advance(by: .seconds(20))
        let (after, _) = try await provider.request(endpoint: endpoint)
        #expect(String(decoding: after, as: UTF8.self) == "ok /data t1")
        #expect(server.refreshCalls == 2)
    }

    @Test("17.8 proactive refreshes do not spend the 401 loop guard")
    func proactiveRefreshesDoNotSpendTheLoopGuard() async throws {
        let clock = ManualClock(startDate: Date())
        let server = try TokenServer(valid: ["t0"])
        defer { server.stop() }
        let refresher = TokenRefresher(
            token: AuthToken(credential: .bearer("t0"), expiresAt: clock.date.addingTimeInterval(60)),
            refreshMargin: .seconds(30),
            maximumRefreshes: 3,
            refreshWindow: .seconds(3600),
            now: { clock.date },
            refresh: server.refreshCall(now: { clock.date })
        )
        let provider = NetworkAgentProvider<ApiEndpoint>(
            plugins: [.tokenRefresh(refresher)],
            agent: TestTransport.agent()
        )
        let endpoint = ApiEndpoint(baseURL: server.baseURL)
        let log = EventRecorder()

        // A long-lived app: six proactive refreshes inside one loop-guard window (tokens live 60 s, so each is due
        // 31 s later).
        for round in 1...6 {
            clock.advance(by: .seconds(31))
            let (data, _) = try await log.observing { try await provider.request(endpoint: endpoint) }
            #expect(String(decoding: data, as: UTF8.self) == "ok /data t\(round)")
        }
        #expect(
            log.events(named: "refresh_started").map { $0.attributes["reason"] }
                == Array(repeating: "proactive", count: 6)
        )

        // A genuine 401 (the token was revoked) is still refreshed and retried.
        server.update { $0.valid = [] }
        let (data, response) = try await log.observing { try await provider.request(endpoint: endpoint) }
        #expect(response.status == 200)
        #expect(String(decoding: data, as: UTF8.self) == "ok /data t7")
        #expect(log.events(named: "request_retried").map { $0.attributes["reason"] } == ["refreshed"])

        // The guard still stops a server that rejects every token: two more 401 refreshes, then the limit.
        server.update { $0.rejectsEverything = true }
        for _ in 0..<2 {
            let (_, rejected) = try await provider.request(endpoint: endpoint)
            #expect(rejected.status == 401)
        }
        let error = await #expect(throws: TokenRefresher.Error.self) { try await provider.request(endpoint: endpoint) }
        #expect(error?.code == .refreshLimitReached)
        #expect(server.refreshCalls == 9)
    }

    @Test func aTokenThatArrivesAlreadyDueIsNotRefreshedProactivelyAgain() async throws {
        let clock = ManualClock(startDate: Date())
        let server = try TokenServer(valid: ["t0"])
        defer { server.stop() }
        // The server's tokens live 60 s, less than the 120 s margin: each one is due the moment it arrives.
        let refresher = TokenRefresher(
            token: AuthToken(credential: .bearer("t0"), expiresAt: clock.date.addingTimeInterval(60)),
            refreshMargin: .seconds(120),
            maximumRefreshes: 100,
            now: { clock.date },
            refresh: server.refreshCall(now: { clock.date })
        )
        let provider = NetworkAgentProvider<ApiEndpoint>(
            plugins: [.tokenRefresh(refresher)],
            agent: TestTransport.agent()
        )
        let endpoint = ApiEndpoint(baseURL: server.baseURL)
        for _ in 0..<5 {
            let (data, _) = try await provider.request(endpoint: endpoint)
            #expect(String(decoding: data, as: UTF8.self) == "ok /data t1")
        }
        #expect(server.refreshCalls == 1, "one proactive refresh, not one per request")
    }
}
