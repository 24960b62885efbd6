import Foundation
import NetworkAgent

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A credential with its `Authorization` value worked out ahead: made once per credential (a fixed credential, a
/// token refresher's current token) instead of once per request.
package struct PreparedCredential: Sendable, Equatable {
    /// The credential.
    package let credential: Credential
    /// `Bearer <token>` or `Basic <…>`, checked as ``Credential/authorizing(_:)`` checks it; `nil` for a credential
    /// that does not go in `Authorization`, or that the check refuses (the request's authorization then throws the
    /// refusal, as it did).
    package let authorizationValue: String?

    /// Prepares `credential`.
    ///
    /// - Parameter credential: The credential.
    package init(_ credential: Credential) {
        self.credential = credential
        authorizationValue = credential.goesInAuthorizationHeader ? (try? credential.authorizationValue()) : nil
    }
}

/// What one pass over a request's field names finds: whether one is `Authorization` and whether one is the sensitive
/// mark (`NetworkAgent-Sensitive-Headers`), both without case.
///
/// `HTTPFieldName.value(of:in:)` and the mark search compare names by their lowercased forms. Between ASCII names
/// that is a comparison of bytes of the same length, ASCII letters folded, so the pass compares only names of the two
/// lengths, and gives up (`nil`) on a name that is not ASCII, where only Foundation's rules can tell.
struct AuthorizationFieldScan {
    /// A name equals `Authorization` without case.
    let hasAuthorization: Bool
    /// A name equals `NetworkAgent-Sensitive-Headers` without case.
    let hasMark: Bool

    private static let authorization: StaticString = "authorization"
    private static let mark: StaticString = "networkagent-sensitive-headers"

    /// Scans the names of `fields`; `nil` when one is not ASCII (or its bytes are not contiguous).
    init?(_ fields: [String: String]) {
        var hasAuthorization = false
        var hasMark = false
        for name in fields.keys {
            let found: (authorization: Bool, mark: Bool)? =
                name.utf8.withContiguousStorageIfAvailable { bytes in
                    for byte in bytes where byte >= 0x80 { return nil }
                    switch bytes.count {
                    case Self.authorization.utf8CodeUnitCount:
                        return (Self.equalsFolded(bytes, Self.authorization), false)
                    case Self.mark.utf8CodeUnitCount: return (false, Self.equalsFolded(bytes, Self.mark))
                    default: return (false, false)
                    }
                } ?? nil
            guard let found else { return nil }
            hasAuthorization = hasAuthorization || found.authorization
            hasMark = hasMark || found.mark
        }
        self.hasAuthorization = hasAuthorization
        self.hasMark = hasMark
    }

    /// Whether the ASCII `bytes`, with `A`–`Z` lowered, are `lowercase` (lowercase ASCII of the same length).
    private static func equalsFolded(_ bytes: UnsafeBufferPointer<UInt8>, _ lowercase: StaticString) -> Bool {
        let expected = lowercase.utf8Start
        for index in 0..<bytes.count {
            let byte = bytes[index]
            let folded = byte >= 0x41 && byte <= 0x5a ? byte | 0x20 : byte
            if folded != expected[index] { return false }
        }
        return true
    }
}
