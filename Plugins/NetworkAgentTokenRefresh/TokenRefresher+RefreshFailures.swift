import Foundation
import NetworkAgent

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension TokenRefresher {
    /// Thrown by a refresh call to say that the refresh was refused for good, so the session is over.
    ///
    /// This is the only error that ends a session: the refresher records it as the `underlying` error of a
    /// ``TokenRefresher/Error`` with code ``TokenRefresher/Error/Code/sessionExpired``, fails every waiting and later
    /// request with it and calls `onSessionExpired` once. Throw it when the token endpoint says the refresh token is
    /// invalid, expired or revoked (OAuth `invalid_grant`, RFC 6749 §5.2), or when your own refresh scheme knows the
    /// user must sign in again. ``checkTokenResponse(_:data:)`` throws it for OAuth token endpoints.
    ///
    /// Any other error a refresh call throws (a timeout, no connection, a `5xx`, a body that does not decode) is
    /// treated as transient: the session and its refresh token are kept, and the next rejected request refreshes
    /// again.
    ///
    /// ```swift
    /// let refresher = TokenRefresher(token: nil) { agent, current in
    ///     guard let refreshToken = current?.refreshToken else { throw TokenRefresher.RefreshRejected("signed out") }
    ///     let (data, response) = try await agent.request(Api.refresh(refreshToken))
    ///     try TokenRefresher.checkTokenResponse(response, data: data)
    ///     let body = try JSONDecoder().decode(TokenResponse.self, from: data)
    ///     return .bearer(jwt: body.accessToken, refreshToken: body.refreshToken ?? refreshToken)
    /// }
    /// ```
    public struct RefreshRejected: Swift.Error, Sendable, CustomStringConvertible {
        /// A human-readable explanation, without secrets.
        public let message: String
        /// The OAuth `error` code of the token endpoint's answer (RFC 6749 §5.2), e.g. `invalid_grant`, if any.
        public let oauthError: String?
        /// The token endpoint's response, if the rejection came with one. Its body is not kept.
        public let response: HTTPURLResponse?

        /// Creates a rejection.
        ///
        /// - Parameters:
        ///   - message: A human-readable explanation, without secrets.
        ///   - oauthError: The OAuth `error` code of the token endpoint's answer, if any.
        ///   - response: The token endpoint's response, if any.
        public init(
            _ message: String = "the refresh was rejected",
            oauthError: String? = nil,
            response: HTTPURLResponse? = nil
        ) {
            self.message = message
            self.oauthError = oauthError
            self.response = response
        }

        /// `TokenRefresher.RefreshRejected: message`, with the OAuth error code and the status where known.
        public var description: String {
            var text = "TokenRefresher.RefreshRejected: \(message)"
            if let oauthError { text += " (\(oauthError))" }
            if let status = response?.statusCode { text += " [HTTP \(status)]" }
            return text
        }
    }

    /// The status codes of a token endpoint answer that mean "try again later": 408 Request Timeout
    /// (RFC 9110 §15.5.9), 429 Too Many Requests (RFC 6585 §4) and every `5xx` (RFC 9110 §15.6).
    static func isTransient(status: Int) -> Bool {
        status == 408 || status == 429 || (500...599).contains(status)
    }

    /// Classifies an OAuth token endpoint's answer (RFC 6749 §5.1, §5.2) for a refresh call: returns for a `2xx`,
    /// throws what the refresher needs to tell a rejection that ends the session from a failure worth retrying.
    ///
    /// Call it in the refresh closure after the side request and before decoding the token:
    ///
    /// ```swift
    /// func refreshedToken(agent: NetworkAgent, refreshToken: String) async throws -> AuthToken {
    ///     let (data, response) = try await agent.request(Api.refresh(refreshToken))
    ///     try TokenRefresher.checkTokenResponse(response, data: data)  // throws RefreshRejected on invalid_grant
    ///     let body = try JSONDecoder().decode(TokenResponse.self, from: data)
    ///     return .bearer(jwt: body.accessToken, refreshToken: body.refreshToken ?? refreshToken)
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - response: The token endpoint's response.
    ///   - data: Its body; only its JSON `error` member is read, and nothing of it is kept.
    /// - Throws:
    ///   - ``RefreshRejected`` for a `400` or `401` whose JSON body has `"error": "invalid_grant"`: the refresh
    ///     token is invalid, expired or revoked, the session ends.
    ///   - ``/NetworkAgent/NetworkAgentError`` with code ``/NetworkAgent/NetworkAgentError/Code/transport`` and an
    ///     underlying `URLError(.badServerResponse)` for a `408`, `429` or `5xx`: transient; the session is kept and
    ///     the error is one that `NetworkAgentRetry`'s default policy retries.
    ///   - ``/NetworkAgent/NetworkAgentError`` with code ``/NetworkAgent/NetworkAgentError/Code/unacceptableStatus``
    ///     for any other status (say `400 invalid_client`): neither ends the session nor is retried.
    ///   - ``/NetworkAgent/NetworkAgentError`` with code ``/NetworkAgent/NetworkAgentError/Code/invalidResponse``
    ///     when the response is not HTTP.
    public static func checkTokenResponse(_ response: URLResponse, data: Data) throws {
        guard let http = response as? HTTPURLResponse else {
            throw NetworkAgentError(.invalidResponse, "the token endpoint's answer is not an HTTP response")
        }
        let status = http.statusCode
        if (200...299).contains(status) { return }
        let oauthError = Self.oauthError(in: data)
        if status == 400 || status == 401, oauthError == "invalid_grant" {
            throw RefreshRejected(
                "the token endpoint rejected the refresh token",
                oauthError: oauthError,
                response: http
            )
        }
        var message = "the token endpoint answered \(status)"
        if let oauthError { message += " (\(oauthError))" }
        if isTransient(status: status) {
            throw NetworkAgentError(
                .transport,
                message,
                underlying: URLError(.badServerResponse),
                response: http
            )
        }
        throw NetworkAgentError(.unacceptableStatus, message, response: http)
    }

    /// The `error` member of an OAuth error response (RFC 6749 §5.2), when the body is a JSON object with one made
    /// of the characters the RFC allows (`%x20-21 / %x23-5B / %x5D-7E`), at most 64 of them.
    private static func oauthError(in data: Data) -> String? {
        guard data.count <= 64 * 1024,
            let object = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any],
            let code = object["error"] as? String, !code.isEmpty, code.count <= 64,
            code.unicodeScalars.allSatisfy({ (0x20...0x7E).contains($0.value) && $0 != "\"" && $0 != "\\" })
        else { return nil }
        return code
    }
}
