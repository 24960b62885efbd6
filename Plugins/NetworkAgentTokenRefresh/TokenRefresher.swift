import Foundation
import NetworkAgent
import NetworkAgentAuth

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Holds the current ``AuthToken`` of a session and renews it, once, however many requests find it expired.
///
/// One refresher serves every provider and plugin of a session. It keeps:
/// - the current token and a **version** number, bumped by every refresh and every ``setToken(_:)``. A request
///   remembers the version it was sent with: a rejection of an older version is answered with the current token,
///   without a new refresh;
/// - at most one **refresh in flight**, run in an unstructured task the refresher owns. Every request that needs
///   the new token waits for that one task; cancelling a waiting request ends its wait only, never the refresh;
/// - a **loop guard**: at most ``maximumRefreshes`` refreshes triggered by rejected requests in any
///   ``refreshWindow``, measured with the injected clock, so that a server answering 401 to every token cannot keep
///   it refreshing. A refresh that fails without ending the session gives its place back: it issued no token, so it
///   cannot be part of such a loop, and the session recovers once the token endpoint is back however many transient
///   failures came first. Proactive refreshes (before expiry) do not count: at most one is made per token, and none
///   for a token that was already due when it arrived;
/// - the **session state**: when the refresh call throws ``RefreshRejected`` (the refresh token is no longer
///   accepted), every waiting request and every later one fails with the same ``Error`` (code
///   ``Error/Code/sessionExpired``) and `onSessionExpired` is called once, until ``setToken(_:)`` starts a new
///   session. Any other refresh failure (a timeout, no connection, a `5xx`) is transient: the waiting requests fail
///   with it, the session and its refresh token are kept, and the next rejected request refreshes again.
///
/// The refresh call receives the agent of the request that needed it, for side requests that bypass the plugin
/// chain (so it never recurses into the refresher), and the token being replaced.
///
/// ```swift
/// let refresher = TokenRefresher(token: .bearer(jwt: saved.access, refreshToken: saved.refresh)) { agent, old in
///     let (data, response) = try await agent.request(Api.refresh(old?.refreshToken ?? ""))
///     try TokenRefresher.checkTokenResponse(response, data: data)  // invalid_grant ends the session, a 5xx does not
///     let body = try JSONDecoder().decode(TokenResponse.self, from: data)
///     return .bearer(jwt: body.accessToken, refreshToken: body.refreshToken)
/// }
/// ```
public actor TokenRefresher {
    /// The refresh call: sends the refresh request through `agent` (not through a provider) and returns the new
    /// token. It throws ``RefreshRejected`` to end the session; any other error it throws keeps the session (see
    /// ``TokenRefresher``).
    public typealias Refresh = @Sendable (_ agent: NetworkAgent, _ current: AuthToken?) async throws -> AuthToken

    /// Called once when the refresh call throws ``RefreshRejected`` and the session ends (where an app signs the
    /// user out). Transient refresh failures never call it.
    public typealias SessionExpiredHandler = @Sendable (_ error: Error) async -> Void

    /// Reads the wall-clock time; inject a fake one to test expiry and the loop guard in virtual time.
    public typealias Now = @Sendable () -> Date

    /// The default time before expiry at which a token is renewed proactively: 30 seconds.
    public static let defaultRefreshMargin: Duration = .seconds(30)
    /// The default most refreshes in one ``defaultRefreshWindow``: 3.
    public static let defaultMaximumRefreshes = 3
    /// The default window of the loop guard: 60 seconds.
    public static let defaultRefreshWindow: Duration = .seconds(60)

    /// An error of the refresher.
    public struct Error: Swift.Error, Sendable, CustomStringConvertible {
        /// What went wrong.
        public struct Code: Hashable, Sendable, CustomStringConvertible {
            private let name: String

            /// The refresh call threw ``TokenRefresher/RefreshRejected``: the session is over until
            /// ``TokenRefresher/setToken(_:)``.
            public static let sessionExpired = Code(name: "session_expired")
            /// The refresh call threw an error that neither ends the session nor is a
            /// ``/NetworkAgent/NetworkAgentError`` (say the token response did not decode). The session goes on; the
            /// next rejected request refreshes again. (A ``/NetworkAgent/NetworkAgentError`` or `URLError` from the
            /// refresh call reaches the waiting requests as a ``/NetworkAgent/NetworkAgentError`` with its code, so
            /// that a retry plugin can retry it.)
            public static let refreshFailed = Code(name: "refresh_failed")
            /// The loop guard stopped a refresh: too many refreshes in the window.
            public static let refreshLimitReached = Code(name: "refresh_limit_reached")

            /// A short, stable name safe as a metrics label, e.g. `session_expired`.
            public var description: String { name }
        }

        /// What went wrong.
        public let code: Code
        /// A human-readable explanation, without secrets.
        public let message: String
        /// The error the refresh call threw, for ``Code/sessionExpired`` and ``Code/refreshFailed``.
        public let underlying: (any Swift.Error)?

        /// Creates an error.
        ///
        /// - Parameters:
        ///   - code: What went wrong.
        ///   - message: A human-readable explanation, without secrets.
        ///   - underlying: The error behind this one.
        public init(_ code: Code, _ message: String, underlying: (any Swift.Error)? = nil) {
            self.code = code
            self.message = message
            self.underlying = underlying
        }

        /// `TokenRefresher.Error(code): message`.
        public var description: String { "TokenRefresher.Error(\(code)): \(message)" }
    }

    /// A credential handed to a request, with the version it belongs to.
    struct Lease: Sendable {
        let credential: Credential
        let version: Int
    }

    /// What a request carries and what it should carry instead.
    struct Preparation: Sendable {
        /// The refresher's credential found in the request.
        let carried: Credential
        /// The credential to send, and its version.
        let lease: Lease
    }

    private struct Refreshing {
        let id: Int
        /// Started because the token was about to expire, not because a request was rejected.
        let proactive: Bool
        /// Its place in the loop guard (`refreshStarts`), for a refresh that a rejected request started.
        let loopGuardStart: Date?
        let task: Task<Void, Never>
    }

    /// How much earlier than its expiry a token is renewed.
    public let refreshMargin: Duration
    /// The most refreshes triggered by rejected requests in any ``refreshWindow``; a refresh that fails without
    /// ending the session (a timeout, no connection, a `5xx`) does not count.
    public let maximumRefreshes: Int
    /// The window of the loop guard.
    public let refreshWindow: Duration

    private let refresh: Refresh
    private let onSessionExpired: SessionExpiredHandler
    private let now: Now

    private var current: AuthToken?
    private var version = 0
    /// Recent credentials and their versions, newest last, to tell which version a request carries.
    private var history: [(version: Int, credential: Credential)] = []
    private var refreshing: Refreshing?
    private var nextRefreshID = 0
    private var waiters: [Int: CheckedContinuation<Lease?, any Swift.Error>] = [:]
    private var nextWaiterID = 0
    private var expired: Error?
    /// Start times of the recent refreshes triggered by rejected requests: the loop guard.
    private var refreshStarts: [Date] = []
    /// The version whose proactive refresh was already tried, or that was already due when it arrived: no
    /// (further) proactive refresh for it.
    private var proactiveSpent: Int?

    private static let historyLimit = 16

    /// What a request needs to know on its way out, copied from the state above after every change of it: most
    /// requests (no refresh in flight, no expiry near) read it under a lock instead of queueing on the actor twice
    /// (issue 29: two actor hops per request, 32 requests in flight, cost more than the rest of the plugin).
    ///
    /// An immutable object, replaced whole on every change: a request reads it with one retain under the lock and
    /// then its fields without the lock, where a struct was copied field by field (the token, the history array,
    /// the error) and destroyed again on every request.
    private final class Published: Sendable {
        let current: AuthToken?
        let version: Int
        let history: [(version: Int, credential: Credential)]
        let expired: Error?
        let isRefreshing: Bool
        let proactiveSpent: Int?
        /// `current`'s credential with its `Authorization` value, made once per change instead of once per request.
        let prepared: PreparedCredential?

        init(
            current: AuthToken?,
            version: Int = 0,
            history: [(version: Int, credential: Credential)],
            expired: Error? = nil,
            isRefreshing: Bool = false,
            proactiveSpent: Int? = nil
        ) {
            self.current = current
            self.version = version
            self.history = history
            self.expired = expired
            self.isRefreshing = isRefreshing
            self.proactiveSpent = proactiveSpent
            self.prepared = current.map { PreparedCredential($0.credential) }
        }
    }

    private nonisolated let published: Locked<Published>

    /// Copies the state requests read into ``published``; called at the end of every method that changes it.
    private func publish() {
        let state = Published(
            current: current,
            version: version,
            history: history,
            expired: expired,
            isRefreshing: refreshing != nil,
            proactiveSpent: proactiveSpent
        )
        published.withLock { $0 = state }
    }

    /// Creates a refresher.
    ///
    /// - Parameters:
    ///   - token: The token of the session, e.g. restored from a keychain; `nil` until ``setToken(_:)``.
    ///   - refreshMargin: How much earlier than expiry to renew; defaults to ``defaultRefreshMargin``.
    ///   - maximumRefreshes: The most refreshes triggered by rejected requests per window; defaults to
    ///     ``defaultMaximumRefreshes``.
    ///   - refreshWindow: The loop guard's window; defaults to ``defaultRefreshWindow``.
    ///   - now: The wall clock; defaults to `Date()`.
    ///   - onSessionExpired: Called once when the refresh call throws ``RefreshRejected``.
    ///   - refresh: The refresh call.
    public init(
        token: AuthToken?,
        refreshMargin: Duration = defaultRefreshMargin,
        maximumRefreshes: Int = defaultMaximumRefreshes,
        refreshWindow: Duration = defaultRefreshWindow,
        now: @escaping Now = { Date() },
        onSessionExpired: @escaping SessionExpiredHandler = { _ in },
        refresh: @escaping Refresh
    ) {
        self.refreshMargin = refreshMargin
        self.maximumRefreshes = max(0, maximumRefreshes)
        self.refreshWindow = refreshWindow
        self.now = now
        self.onSessionExpired = onSessionExpired
        self.refresh = refresh
        self.current = token
        let history = token.map { [(version: 0, credential: $0.credential)] } ?? []
        self.history = history
        published = Locked(Published(current: token, history: history))
    }

    /// The current token, `nil` when signed out.
    public var token: AuthToken? { current }

    /// Whether a refresh was rejected and requests fail fast until ``setToken(_:)``.
    public var isSessionExpired: Bool { expired != nil }

    /// Starts a new session with a token (after a sign-in), or ends it with `nil` (after a sign-out).
    ///
    /// Clears an expired session and the loop guard (a token already due is refreshed proactively once), and
    /// forgets the credentials of the previous session: a request still in flight with one of them is never upgraded
    /// to the new session's token, and its rejection is returned as it is. A refresh in flight is cancelled and its
    /// outcome ignored; the requests waiting for it return the responses that rejected them.
    ///
    /// - Parameter token: The new token, or `nil`.
    public func setToken(_ token: AuthToken?) {
        defer { publish() }
        install(token)
        history = token.map { [(version, $0.credential)] } ?? []
        expired = nil
        refreshStarts = []
        proactiveSpent = nil
        if let refreshing {
            refreshing.task.cancel()
            self.refreshing = nil
            resumeWaiters(with: .success(nil))
        }
    }

    // MARK: - Used by the plugin

    /// The credential for a request being built, with its `Authorization` value prepared when the token was
    /// published; fails fast once the session expired.
    nonisolated func preparedCredentialForNewRequest() throws(Error) -> PreparedCredential? {
        let state = published.withLock { $0 }
        if let expired = state.expired { throw expired }
        return state.prepared
    }

    /// What ``preparationAtOnce(_:)`` found: the answer, or that the actor must decide.
    enum QuickPreparation {
        /// The answer: the preparation, or `nil` for a request that does not carry one of the refresher's
        /// credentials.
        case decided(Preparation?)
        /// A refresh is in flight or due: ``prepareOnActor(_:agent:)`` decides (and starts or waits for it).
        case onActor
    }

    /// Finds the refresher's credential in a request and the credential it should carry now, without a suspension
    /// for most requests (no refresh in flight or due), where the answer follows from the published state; when
    /// a refresh is in flight or due, ``prepareOnActor(_:agent:)`` decides (waiting for it, or after a proactive
    /// one when the token is about to expire).
    nonisolated func preparationAtOnce(_ request: URLRequest) throws -> QuickPreparation {
        let state = published.withLock { $0 }
        guard let carried = state.history.last(where: { $0.credential.isCarried(by: request) }) else {
            return .decided(nil)
        }
        if let expired = state.expired { throw expired }
        guard !state.isRefreshing else { return .onActor }
        guard let token = state.current else { return .decided(nil) }
        if let expiresAt = token.expiresAt, state.proactiveSpent != state.version,
            now().addingTimeInterval(refreshMargin.timeInterval) >= expiresAt
        {
            return .onActor
        }
        return .decided(
            Preparation(carried: carried.credential, lease: Lease(credential: token.credential, version: state.version))
        )
    }

    /// The preparation of a request on the actor, for a request that may have to wait for a refresh or start one;
    /// `nil` for a request that does not carry one of the refresher's credentials.
    func prepareOnActor(_ request: URLRequest, agent: NetworkAgent) async throws -> Preparation? {
        guard let carried = history.last(where: { $0.credential.isCarried(by: request) }) else { return nil }
        if let expired { throw expired }
        if let inFlight = refreshing {
            return try await lease(waitingFor: inFlight).map { Preparation(carried: carried.credential, lease: $0) }
        }
        guard let token = current else { return nil }
        if isDueForProactiveRefresh(token) {
            let inFlight = startRefresh(proactive: true, agent: agent)
            return try await lease(waitingFor: inFlight).map { Preparation(carried: carried.credential, lease: $0) }
        }
        return Preparation(carried: carried.credential, lease: Lease(credential: token.credential, version: version))
    }

    /// Whether the current token expires within the margin and its one proactive refresh is still to be tried.
    private func isDueForProactiveRefresh(_ token: AuthToken) -> Bool {
        guard proactiveSpent != version, let expiresAt = token.expiresAt else { return false }
        return now().addingTimeInterval(refreshMargin.timeInterval) >= expiresAt
    }

    /// The credential a request about to be sent should carry once `refresh` ends. When a proactive refresh fails
    /// without ending the session, that is the current credential: the token has not been rejected, and the server
    /// decides whether it is still good.
    private func lease(waitingFor refresh: Refreshing) async throws -> Lease? {
        do {
            return try await waitForRefresh()
        } catch {
            guard refresh.proactive, expired == nil, !Task.isCancelled else { throw error }
            return current.map { Lease(credential: $0.credential, version: version) }
        }
    }

    /// The credential to retry with after the credential of version `rejected` was refused: the current one if it
    /// is newer, else a refreshed one (shared with every other request that needs it), and whether a refresh was
    /// waited for. `nil` when signed out.
    func recover(rejected: Int, agent: NetworkAgent) async throws -> (lease: Lease, refreshed: Bool)? {
        if let expired { throw expired }
        if refreshing == nil {
            guard let token = current else { return nil }
            if rejected < version { return (Lease(credential: token.credential, version: version), false) }
            let loopGuardStart = try checkLoopGuard()
            startRefresh(proactive: false, agent: agent, loopGuardStart: loopGuardStart)
        }
        return try await waitForRefresh().map { ($0, true) }
    }

    /// The number of requests waiting for the refresh in flight.
    package var waitingCount: Int { waiters.count }

    /// The number of refresh calls that have returned or thrown, superseded ones included.
    package private(set) var finishedRefreshes = 0

    // MARK: - Refreshing

    /// Counts a refresh triggered by a rejected request, or throws when the window already holds
    /// ``maximumRefreshes`` of them. Proactive refreshes never come here.
    ///
    /// - Returns: The refresh's place in the guard, given back if it fails without ending the session.
    private func checkLoopGuard() throws(Error) -> Date {
        let started = now()
        let window = refreshWindow.timeInterval
        refreshStarts.removeAll { started.timeIntervalSince($0) >= window }
        guard refreshStarts.count < maximumRefreshes else {
            Self.emit(Self.otherEvent("refresh_limit_reached"), ["limit": String(maximumRefreshes)])
            throw Error(
                .refreshLimitReached,
                "\(maximumRefreshes) token refreshes within \(refreshWindow) already; not refreshing again"
            )
        }
        refreshStarts.append(started)
        return started
    }

    @discardableResult
    private func startRefresh(proactive: Bool, agent: NetworkAgent, loopGuardStart: Date? = nil) -> Refreshing {
        defer { publish() }
        if proactive { proactiveSpent = version }
        let id = nextRefreshID
        nextRefreshID += 1
        Self.emit(
            Self.otherEvent("refresh_started"),
            ["reason": proactive ? "proactive" : "unauthorized", "version": String(version)]
        )
        let token = current
        // Unstructured, owned by the refresher: no waiting request's cancellation reaches it. It inherits the
        // task-local event observers of the request that started it, so the events reach that call's observers.
        let task = Task { [refresh, onSessionExpired] in
            let result: Result<AuthToken, any Swift.Error>
            do {
                result = .success(try await refresh(agent, token))
            } catch {
                result = .failure(error)
            }
            if let expiredError = self.finishRefresh(id, result) {
                await onSessionExpired(expiredError)
            }
        }
        let started = Refreshing(id: id, proactive: proactive, loopGuardStart: loopGuardStart, task: task)
        refreshing = started
        return started
    }

    /// Applies a refresh's result and wakes its waiters; returns the error to report when the session ended.
    private func finishRefresh(_ id: Int, _ result: Result<AuthToken, any Swift.Error>) -> Error? {
        defer { publish() }
        finishedRefreshes += 1
        guard let finished = refreshing, finished.id == id else { return nil }  // superseded by setToken
        refreshing = nil
        switch result {
        case .success(let token):
            install(token)
            // A token that is due already would be refreshed again by every request: it is used until rejected.
            if let expiresAt = token.expiresAt, now().addingTimeInterval(refreshMargin.timeInterval) >= expiresAt {
                proactiveSpent = version
            }
            Self.emit(.tokenRefresh(succeeded: true), ["version": String(version)])
            resumeWaiters(with: .success(Lease(credential: token.credential, version: version)))
            return nil
        case .failure(let rejection as RefreshRejected):
            let error = Error(
                .sessionExpired,
                "the token refresh was rejected; the session is over until a new token is set",
                underlying: rejection
            )
            expired = error
            Self.emit(.tokenRefresh(succeeded: false), ["error": Self.label(rejection), "session_expired": "true"])
            resumeWaiters(with: .failure(error))
            return error
        case .failure(let failure):
            // No token came of it, so it is no step of a refresh loop: its place in the loop guard is given back.
            if let start = finished.loopGuardStart, let index = refreshStarts.firstIndex(of: start) {
                refreshStarts.remove(at: index)
            }
            Self.emit(.tokenRefresh(succeeded: false), ["error": Self.label(failure), "session_expired": "false"])
            resumeWaiters(with: .failure(Self.transientError(failure)))
            return nil
        }
    }

    /// What the requests waiting for a refresh that failed without ending the session fail with: the refresh's own
    /// ``/NetworkAgent/NetworkAgentError`` (code, underlying error and response kept, so a retry plugin classifies it
    /// as it would the request's own failure; the body is dropped, it came from the token endpoint), a `URLError`
    /// as a ``/NetworkAgent/NetworkAgentError/Code/transport`` error, anything else as ``Error/Code/refreshFailed``.
    private static func transientError(_ failure: any Swift.Error) -> any Swift.Error {
        let prefix = "the token refresh failed (the session goes on): "
        switch failure {
        case let error as NetworkAgentError:
            return NetworkAgentError(
                error.code,
                prefix + error.message,
                underlying: error.underlying,
                response: error.response
            )
        case let error as URLError:
            return NetworkAgentError(.transport, prefix + "URLError \(error.code.rawValue)", underlying: error)
        default:
            return Error(
                .refreshFailed,
                prefix + String(describing: type(of: failure)),
                underlying: failure
            )
        }
    }

    private func install(_ token: AuthToken?) {
        current = token
        version += 1
        if let token {
            history.append((version, token.credential))
            if history.count > Self.historyLimit { history.removeFirst(history.count - Self.historyLimit) }
        }
    }

    private func waitForRefresh() async throws -> Lease? {
        let id = nextWaiterID
        nextWaiterID += 1
        do {
            return try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { continuation in
                    if Task.isCancelled {
                        continuation.resume(throwing: CancellationError())
                    } else {
                        waiters[id] = continuation
                    }
                }
            } onCancel: {
                Task { await self.cancelWaiter(id) }
            }
        } catch is CancellationError {
            throw NetworkAgentError(.cancelled, "the request was cancelled while waiting for a token refresh")
        }
    }

    private func cancelWaiter(_ id: Int) {
        waiters.removeValue(forKey: id)?.resume(throwing: CancellationError())
    }

    private func resumeWaiters(with result: Result<Lease?, any Swift.Error>) {
        let waiting = waiters
        waiters = [:]
        for continuation in waiting.values {
            continuation.resume(with: result)
        }
    }

    private static func emit(_ kind: NetworkAgentEvent.Kind, _ attributes: [String: String]) {
        guard NetworkAgentEvents.hasObservers else { return }
        NetworkAgentEvents.emit(NetworkAgentEvent(kind, attributes: attributes))
    }

    /// An event no other plugin acts on: known by its name only, with source `token_refresh`.
    static func otherEvent(_ name: String) -> NetworkAgentEvent.Kind {
        .other(source: "token_refresh", name: name)
    }

    /// A metrics-safe label for a refresh error: the agent's code, or the error's type name.
    private static func label(_ error: any Swift.Error) -> String {
        (error as? NetworkAgentError)?.shortDescription ?? String(describing: type(of: error))
    }
}
