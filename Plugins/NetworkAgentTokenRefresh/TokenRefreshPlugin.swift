import Foundation
import NetworkAgent
import NetworkAgentAuth

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Authorizes requests with a ``TokenRefresher``'s token and, when the server rejects it, retries them once with
/// a fresh one — one refresh however many requests were rejected at once.
///
/// - `onRequest` works as ``/NetworkAgentAuth/AuthPlugin`` with the refresher as the credential provider (same origin,
///   transport, per-endpoint and precedence rules); once the session expired, it fails at once.
/// - `intercept` sees the final request. If it carries one of the refresher's credentials, it first swaps in the
///   current one (after waiting for a refresh in flight, or refreshing proactively before expiry), sends it, and
///   when the ``RefreshTrigger`` matches, gets a newer credential from the refresher — the current one if the
///   request was sent with an older version, otherwise the result of the single shared refresh — and re-sends
///   the same request with it through `next`, so every header the chain added is kept. Each request is
///   retried at most once; a second rejection is returned as it is.
///
/// Emits `token_refresh` events: `refresh_started` (`reason`: `unauthorized` or `proactive`),
/// `refresh_succeeded`, `refresh_failed` (`session_expired`: `true` or `false`; both of kind
/// ``/NetworkAgent/NetworkAgentEvent/Kind/tokenRefresh(succeeded:)``), `refresh_limit_reached` and
/// `request_retried` (`reason`: `refreshed` or `newer_credential`).
///
/// ```swift
/// let provider = NetworkAgentProvider<Api>(plugins: [.logging(), .tokenRefresh(refresher), .validate()])
/// ```
public struct TokenRefreshPlugin: NetworkAgentPlugin {
    /// The session's token holder.
    public let refresher: TokenRefresher
    /// When a response means "refresh and retry".
    public let trigger: RefreshTrigger
    private let auth: AuthPlugin

    /// Creates a token refresh plugin.
    ///
    /// - Parameters:
    ///   - refresher: The session's token holder, shared by every provider of the session.
    ///   - trigger: When a response means "refresh and retry"; defaults to ``RefreshTrigger/unauthorized``.
    ///   - additionalOrigins: Origins besides each endpoint's `baseURL` origin that receive the token.
    ///   - plainHTTPHosts: Non-loopback hosts that may receive it over plain `http://`.
    public init(
        refresher: TokenRefresher,
        trigger: RefreshTrigger = .unauthorized,
        additionalOrigins: [URL] = [],
        plainHTTPHosts: Set<String> = []
    ) {
        self.refresher = refresher
        self.trigger = trigger
        // The refresher's state is read without a suspension, with the current token's `Authorization` value
        // made when the token was published.
        self.auth = AuthPlugin(
            additionalOrigins: additionalOrigins,
            plainHTTPHosts: plainHTTPHosts,
            source: .immediate { try refresher.preparedCredentialForNewRequest() }
        )
    }

    /// Adds the refresher's current credential under the ``/NetworkAgentAuth/AuthPlugin`` rules.
    ///
    /// - Parameters:
    ///   - request: The request so far.
    ///   - endpoint: The endpoint of the call.
    /// - Returns: The request, with the credential or unchanged.
    /// - Throws: ``TokenRefresher/Error`` with ``TokenRefresher/Error/Code/sessionExpired`` once a refresh was
    ///   rejected, and the ``/NetworkAgentAuth/AuthPlugin/Error``s.
    public func onRequest(
        _ request: consuming URLRequest,
        endpoint: any NetworkAgentEndpoint
    ) async throws -> URLRequest {
        try await auth.onRequest(consume request, endpoint: endpoint)
    }

    /// Sends the request with the current credential and retries it once with a fresh one when rejected.
    ///
    /// - Parameters:
    ///   - request: The final request of the `onRequest` phase.
    ///   - endpoint: The endpoint of the call.
    ///   - next: The rest of the exchange.
    /// - Returns: The response to the request or to its one retry.
    /// - Throws: ``TokenRefresher/Error`` (the session expired, the loop guard stopped a refresh, a refresh failed
    ///   with an error of its own: ``TokenRefresher/Error/Code/refreshFailed``), the
    ///   ``/NetworkAgent/NetworkAgentError`` of a refresh that failed on the network or with a `5xx` (the session
    ///   goes on; a retry plugin registered before this one retries it as it would the request's own failure),
    ///   ``/NetworkAgent/NetworkAgentError`` with ``/NetworkAgent/NetworkAgentError/Code/cancelled`` when cancelled
    ///   while waiting for a refresh, and whatever `next` throws.
    public func intercept(
        _ request: URLRequest,
        endpoint: any NetworkAgentEndpoint,
        next: NetworkAgentExchange
    ) async throws -> (data: Data, response: URLResponse) {
        // Most requests are decided without a suspension (no refresh in flight or due).
        let prepared: TokenRefresher.Preparation?
        switch try refresher.preparationAtOnce(request) {
        case .decided(let decided): prepared = decided
        case .onActor: prepared = try await refresher.prepareOnActor(request, agent: next.agent)
        }
        guard let preparation = prepared else {
            return try await next(request)
        }
        let carried = preparation.carried
        let sent = try Self.request(request, replacing: carried, with: preparation.lease.credential)
        let first = try await next(sent)
        guard let http = first.response as? HTTPURLResponse, trigger.matches(http, data: first.data),
            let recovery = try await refresher.recover(rejected: preparation.lease.version, agent: next.agent)
        else { return first }
        if NetworkAgentEvents.hasObservers {
            NetworkAgentEvents.emit(
                NetworkAgentEvent(
                    TokenRefresher.otherEvent("request_retried"),
                    attributes: [
                        "reason": recovery.refreshed ? "refreshed" : "newer_credential",
                        "status": String(http.statusCode),
                    ]
                )
            )
        }
        return try await next(Self.request(request, replacing: carried, with: recovery.lease.credential))
    }

    /// The request with `old` taken out and `new` put in (unchanged when they are the same).
    private static func request(
        _ request: URLRequest,
        replacing old: Credential,
        with new: Credential
    ) throws(AuthPlugin.Error) -> URLRequest {
        guard old != new else { return request }
        return try new.authorizing(old.removed(from: request))
    }
}

extension NetworkAgentPlugin where Self == TokenRefreshPlugin {
    /// A plugin that authorizes requests with the refresher's token and retries rejected ones once after a
    /// single shared refresh.
    ///
    /// - Parameters:
    ///   - refresher: The session's token holder.
    ///   - trigger: When a response means "refresh and retry"; defaults to ``RefreshTrigger/unauthorized``.
    ///   - additionalOrigins: Origins besides each endpoint's `baseURL` origin that receive the token.
    ///   - plainHTTPHosts: Non-loopback hosts that may receive it over plain `http://`.
    /// - Returns: A ``TokenRefreshPlugin``.
    public static func tokenRefresh(
        _ refresher: TokenRefresher,
        trigger: RefreshTrigger = .unauthorized,
        additionalOrigins: [URL] = [],
        plainHTTPHosts: Set<String> = []
    ) -> TokenRefreshPlugin {
        TokenRefreshPlugin(
            refresher: refresher,
            trigger: trigger,
            additionalOrigins: additionalOrigins,
            plainHTTPHosts: plainHTTPHosts
        )
    }
}
