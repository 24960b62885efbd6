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
/// - a **loop guard**: at most ``maximumRefreshes`` refreshes in any ``refreshWindow``, measured with the injected
///   clock, so that a server answering 401 to every token cannot keep it refreshing;
/// - the **session state**: when a refresh fails, every waiting request and every later one fails with the same
///   ``Error`` (code ``Error/Code/sessionExpired``) and `onSessionExpired` is called once, until
///   ``setToken(_:)`` starts a new session.
///
/// The refresh call receives the agent of the request that needed it, for side requests that bypass the plugin
/// chain (so it never recurses into the refresher), and the token being replaced.
///
/// ```swift
/// let refresher = TokenRefresher(token: .bearer(jwt: saved.access, refreshToken: saved.refresh)) { agent, old in
///     let (data, _) = try await agent.request(Api.refresh(old?.refreshToken ?? ""))
///     let body = try JSONDecoder().decode(TokenResponse.self, from: data)
///     return .bearer(jwt: body.accessToken, refreshToken: body.refreshToken)
/// }
/// ```
public actor TokenRefresher {
    /// The refresh call: sends the refresh request through `agent` (not through a provider) and returns the new
    /// token, or throws to end the session.
    public typealias Refresh = @Sendable (_ agent: NetworkAgent, _ current: AuthToken?) async throws -> AuthToken

    /// Called once when a refresh fails and the session ends (where an app signs the user out).
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

            /// A refresh failed: the session is over until ``TokenRefresher/setToken(_:)``.
            public static let sessionExpired = Code(name: "session_expired")
            /// The loop guard stopped a refresh: too many refreshes in the window.
            public static let refreshLimitReached = Code(name: "refresh_limit_reached")

            /// A short, stable name safe as a metrics label, e.g. `session_expired`.
            public var description: String { name }
        }

        /// What went wrong.
        public let code: Code
        /// A human-readable explanation, without secrets.
        public let message: String
        /// The error the refresh call threw, for ``Code/sessionExpired``.
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
        let task: Task<Void, Never>
    }

    /// How much earlier than its expiry a token is renewed.
    public let refreshMargin: Duration
    /// The most refreshes in any ``refreshWindow``.
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
    private var refreshStarts: [Date] = []

    private static let historyLimit = 16

    /// Creates a refresher.
    ///
    /// - Parameters:
    ///   - token: The token of the session, e.g. restored from a keychain; `nil` until ``setToken(_:)``.
    ///   - refreshMargin: How much earlier than expiry to renew; defaults to ``defaultRefreshMargin``.
    ///   - maximumRefreshes: The most refreshes per window; defaults to ``defaultMaximumRefreshes``.
    ///   - refreshWindow: The loop guard's window; defaults to ``defaultRefreshWindow``.
    ///   - now: The wall clock; defaults to `Date()`.
    ///   - onSessionExpired: Called once when a refresh fails.
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
        if let token { history = [(0, token.credential)] }
    }

    /// The current token, `nil` when signed out.
    public var token: AuthToken? { current }

    /// Whether a refresh failed and requests fail fast until ``setToken(_:)``.
    public var isSessionExpired: Bool { expired != nil }

    /// Starts a new session with a token (after a sign-in), or ends it with `nil` (after a sign-out).
    ///
    /// Clears an expired session and the loop guard, and forgets the credentials of the previous session: a
    /// request still in flight with one of them is never upgraded to the new session's token, and its rejection is
    /// returned as it is. A refresh in flight is cancelled and its outcome ignored; the requests waiting for it
    /// return the responses that rejected them.
    ///
    /// - Parameter token: The new token, or `nil`.
    public func setToken(_ token: AuthToken?) {
        install(token)
        history = token.map { [(version, $0.credential)] } ?? []
        expired = nil
        refreshStarts = []
        if let refreshing {
            refreshing.task.cancel()
            self.refreshing = nil
            resumeWaiters(with: .success(nil))
        }
    }

    // MARK: - Used by the plugin

    /// The credential for a request being built; fails fast once the session expired.
    func credentialForNewRequest() throws(Error) -> Credential? {
        if let expired { throw expired }
        return current?.credential
    }

    /// Finds the refresher's credential in a request and the credential it should carry now: after waiting for a
    /// refresh in flight, or after a proactive one when the token is about to expire. `nil` for a request that
    /// does not carry one of the refresher's credentials.
    func prepare(_ request: URLRequest, agent: NetworkAgent) async throws -> Preparation? {
        guard let carried = history.last(where: { $0.credential.isCarried(by: request) }) else { return nil }
        if let expired { throw expired }
        if refreshing != nil {
            return try await waitForRefresh().map { Preparation(carried: carried.credential, lease: $0) }
        }
        guard let token = current else { return nil }
        if let expiresAt = token.expiresAt, now().addingTimeInterval(Self.seconds(refreshMargin)) >= expiresAt,
            (try? startRefresh(reason: "proactive", agent: agent)) != nil
        {
            return try await waitForRefresh().map { Preparation(carried: carried.credential, lease: $0) }
        }
        return Preparation(carried: carried.credential, lease: Lease(credential: token.credential, version: version))
    }

    /// The credential to retry with after the credential of version `rejected` was refused: the current one if it
    /// is newer, else a refreshed one (shared with every other request that needs it), and whether a refresh was
    /// waited for. `nil` when signed out.
    func recover(rejected: Int, agent: NetworkAgent) async throws -> (lease: Lease, refreshed: Bool)? {
        if let expired { throw expired }
        if refreshing == nil {
            guard let token = current else { return nil }
            if rejected < version { return (Lease(credential: token.credential, version: version), false) }
            try startRefresh(reason: "unauthorized", agent: agent)
        }
        return try await waitForRefresh().map { ($0, true) }
    }

    /// The number of requests waiting for the refresh in flight.
    package var waitingCount: Int { waiters.count }

    /// The number of refresh calls that have returned or thrown, superseded ones included.
    package private(set) var finishedRefreshes = 0

    // MARK: - Refreshing

    private func startRefresh(reason: String, agent: NetworkAgent) throws(Error) {
        let started = now()
        let window = Self.seconds(refreshWindow)
        refreshStarts.removeAll { started.timeIntervalSince($0) >= window }
        guard refreshStarts.count < maximumRefreshes else {
            Self.emit("refresh_limit_reached", ["limit": String(maximumRefreshes)])
            throw Error(
                .refreshLimitReached,
                "\(maximumRefreshes) token refreshes within \(refreshWindow) already; not refreshing again"
            )
        }
        refreshStarts.append(started)
        let id = nextRefreshID
        nextRefreshID += 1
        Self.emit("refresh_started", ["reason": reason, "version": String(version)])
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
        refreshing = Refreshing(id: id, task: task)
    }

    /// Applies a refresh's result and wakes its waiters; returns the error to report when the session ended.
    private func finishRefresh(_ id: Int, _ result: Result<AuthToken, any Swift.Error>) -> Error? {
        finishedRefreshes += 1
        guard refreshing?.id == id else { return nil }  // superseded by setToken
        refreshing = nil
        switch result {
        case .success(let token):
            install(token)
            Self.emit("refresh_succeeded", ["version": String(version)])
            resumeWaiters(with: .success(Lease(credential: token.credential, version: version)))
            return nil
        case .failure(let failure):
            let error = Error(
                .sessionExpired,
                "the token refresh failed; the session is over until a new token is set",
                underlying: failure
            )
            expired = error
            Self.emit("refresh_failed", ["error": Self.label(failure)])
            resumeWaiters(with: .failure(error))
            return error
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

    private func resumeWaiters(with result: Result<Lease?, Error>) {
        let waiting = waiters
        waiters = [:]
        for continuation in waiting.values {
            continuation.resume(with: result.mapError { $0 as any Swift.Error })
        }
    }

    private static func emit(_ name: String, _ attributes: [String: String]) {
        guard NetworkAgentEvents.hasObservers else { return }
        NetworkAgentEvents.emit(NetworkAgentEvent(source: "token_refresh", name: name, attributes: attributes))
    }

    /// A metrics-safe label for a refresh error: the agent's code, or the error's type name.
    private static func label(_ error: any Swift.Error) -> String {
        (error as? NetworkAgentError)?.shortDescription ?? String(describing: type(of: error))
    }

    private static func seconds(_ duration: Duration) -> TimeInterval {
        let (seconds, attoseconds) = duration.components
        return TimeInterval(seconds) + TimeInterval(attoseconds) * 1e-18
    }
}
