import Foundation
import NetworkAgent
import NetworkAgentAuth

/// A credential with what a ``TokenRefresher`` needs to renew it: when it expires, and the refresh token.
///
/// Printing a token never shows a secret.
public struct AuthToken: Sendable, Hashable, CustomStringConvertible {
    /// What requests carry, e.g. `.bearer(accessToken)`.
    public var credential: Credential
    /// When the credential stops being accepted, if known. The refresher renews it proactively
    /// ``TokenRefresher/refreshMargin`` before.
    public var expiresAt: Date?
    /// The token the refresh call exchanges for a new credential (RFC 6749 §6), if the app keeps it here.
    public var refreshToken: String?

    /// Creates a token.
    ///
    /// - Parameters:
    ///   - credential: What requests carry.
    ///   - expiresAt: When it expires, if known.
    ///   - refreshToken: The refresh token, if any.
    public init(credential: Credential, expiresAt: Date? = nil, refreshToken: String? = nil) {
        self.credential = credential
        self.expiresAt = expiresAt
        self.refreshToken = refreshToken
    }

    /// Creates a token from a token response's `expires_in` (RFC 6749 §5.1).
    ///
    /// - Parameters:
    ///   - credential: What requests carry.
    ///   - expiresIn: The lifetime the server announced.
    ///   - issuedAt: When the response arrived; defaults to now.
    ///   - refreshToken: The refresh token, if any.
    public init(credential: Credential, expiresIn: Duration, issuedAt: Date = Date(), refreshToken: String? = nil) {
        self.init(
            credential: credential,
            expiresAt: issuedAt.addingTimeInterval(expiresIn.timeInterval),
            refreshToken: refreshToken
        )
    }

    /// A Bearer token whose expiry is read from its JWT `exp` claim (RFC 7519 §4.1.4); no expiry if the token is
    /// not a JWT with a numeric `exp`.
    ///
    /// - Parameters:
    ///   - jwt: The access token.
    ///   - refreshToken: The refresh token, if any.
    /// - Returns: The token.
    public static func bearer(jwt: String, refreshToken: String? = nil) -> AuthToken {
        AuthToken(credential: .bearer(jwt), expiresAt: expiry(ofJWT: jwt), refreshToken: refreshToken)
    }

    /// The `exp` claim of a JWT (RFC 7519 §4.1.4) as a date. The signature is not checked: this is for scheduling a
    /// refresh, not for trusting the token.
    ///
    /// - Parameter jwt: A compact JWT, `header.payload.signature`, base64url-encoded (RFC 7515 §2).
    /// - Returns: The expiry, or `nil` when the text is not a JWT or has no numeric `exp`.
    public static func expiry(ofJWT jwt: String) -> Date? {
        let parts = jwt.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3 else { return nil }
        var base64 = parts[1].replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        guard let payload = Data(base64Encoded: base64),
            let claims = (try? JSONSerialization.jsonObject(with: payload)) as? [String: Any],
            let seconds = (claims["exp"] as? NSNumber)?.doubleValue, seconds.isFinite
        else { return nil }
        return Date(timeIntervalSince1970: seconds)
    }

    /// The credential's redacted description and the expiry; the refresh token is never shown.
    public var description: String {
        var text = "AuthToken(\(credential)"
        if let expiresAt { text += ", expiresAt: \(expiresAt)" }
        if refreshToken != nil { text += ", refreshToken: <redacted>" }
        return text + ")"
    }
}
