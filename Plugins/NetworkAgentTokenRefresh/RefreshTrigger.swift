import Foundation
import NetworkAgent

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Decides from a response whether the credential it was sent with is no longer accepted, so that the
/// ``TokenRefreshPlugin`` refreshes it and retries the request once.
public struct RefreshTrigger: Sendable {
    private let predicate: @Sendable (HTTPURLResponse, Data) -> Bool

    /// Creates a trigger from a predicate.
    ///
    /// - Parameter predicate: Whether the response (with its body) rejects the credential.
    public init(_ predicate: @escaping @Sendable (HTTPURLResponse, Data) -> Bool) {
        self.predicate = predicate
    }

    /// Whether a response rejects the credential it was sent with.
    ///
    /// - Parameters:
    ///   - response: The response.
    ///   - data: Its body.
    /// - Returns: `true` to refresh and retry.
    public func matches(_ response: HTTPURLResponse, data: Data) -> Bool {
        predicate(response, data)
    }

    /// Any `401 Unauthorized` (RFC 9110 §15.5.2). The default.
    public static let unauthorized = RefreshTrigger { response, _ in response.statusCode == 401 }

    /// A `401` whose `WWW-Authenticate` challenge says `error="invalid_token"` (RFC 6750 §3.1): the token
    /// expired or was revoked, as opposed to a missing or malformed one.
    public static let invalidTokenChallenge = RefreshTrigger { response, _ in
        guard response.statusCode == 401, let challenge = response.value(forHTTPHeaderField: "WWW-Authenticate")
        else { return false }
        let compact = challenge.lowercased().replacingOccurrences(of: " ", with: "")
        return compact.contains("error=\"invalid_token\"") || compact.contains("error=invalid_token")
    }

    /// Any of the given status codes, e.g. `[401, 403]` for an API that answers 403 to expired tokens.
    ///
    /// - Parameter codes: The status codes that mean "refresh".
    /// - Returns: The trigger.
    public static func status(_ codes: Set<Int>) -> RefreshTrigger {
        RefreshTrigger { response, _ in codes.contains(response.statusCode) }
    }
}
