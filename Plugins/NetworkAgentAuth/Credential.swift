import Foundation
import NetworkAgent

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A secret that proves who the caller is, and where in a request it goes.
///
/// Printing a credential never shows the secret: `description` is `bearer(<redacted>)`,
/// `basic(username: ann, password: <redacted>)` and so on.
public enum Credential: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible {
    /// `Authorization: Bearer <token>` (RFC 6750 §2.1).
    case bearer(String)
    /// `Authorization: Basic <base64(username:password)>` with UTF-8 text (RFC 7617 §2, §2.1). The username must
    /// not contain a colon.
    case basic(username: String, password: String)
    /// A header of your choice, such as `X-API-Key: <key>`.
    case header(name: String, value: String)
    /// A query parameter of your choice, such as `?api_key=<key>`, percent-encoded (RFC 3986 unreserved
    /// characters kept).
    case query(name: String, value: String)

    /// A stable lowercase name of the scheme, safe for logs and events: `bearer`, `basic`, `header` or `query`.
    public var scheme: String {
        switch self {
        case .bearer: "bearer"
        case .basic: "basic"
        case .header: "header"
        case .query: "query"
        }
    }

    /// The credential with its secret replaced by `<redacted>`.
    public var description: String {
        switch self {
        case .bearer: "bearer(<redacted>)"
        case .basic(let username, _): "basic(username: \(username), password: <redacted>)"
        case .header(let name, _): "header(name: \(name), value: <redacted>)"
        case .query(let name, _): "query(name: \(name), value: <redacted>)"
        }
    }

    /// The same as ``description``: the secret is never printed.
    public var debugDescription: String { description }

    /// A copy of a request carrying this credential, replacing whatever the request had in the same place (the
    /// `Authorization` header, the named header, or every query item of that name).
    ///
    /// The caller decides whether the request may carry it: this does no origin or transport check. The header it
    /// sets is added to `URLRequest.sensitiveHeaderNames`, so that the transport drops it on a redirect to another
    /// origin and logs redact it.
    ///
    /// - Parameter request: The request to authorize.
    /// - Returns: The authorized request.
    /// - Throws: ``AuthPlugin/Error`` with ``AuthPlugin/Error/Code/invalidCredential`` for a Basic username with a
    ///   colon, a header name that is not an RFC 9110 token, a value with control characters (CR, LF, NUL…) or an
    ///   empty query name; and for a request without URL when the credential goes in the query.
    public func authorizing(_ request: URLRequest) throws(AuthPlugin.Error) -> URLRequest {
        var request = request
        try authorize(&request)
        return request
    }

    /// ``authorizing(_:)`` in place: a request its caller holds alone is changed without Foundation's copy of it
    /// (the auth plugin's case, since the provider hands the request over). On a throw the request is unchanged.
    ///
    /// - Parameters:
    ///   - request: The request to authorize.
    ///   - placeIsFree: The caller has just found ``placeIsTaken(in:)`` `false`: a header credential is filed
    ///     without searching the fields for it again.
    package func authorize(_ request: inout URLRequest, placeIsFree: Bool = false) throws(AuthPlugin.Error) {
        switch self {
        case .bearer, .basic:
            // One change of the fields for the header and its mark (each change rewrites all of them).
            if let value = try authorizationValue() {
                request.setSensitiveHeaderField(value, for: "Authorization", isAbsent: placeIsFree)
            }
        case .header(let name, let value):
            guard !name.isEmpty, name.unicodeScalars.allSatisfy(Self.isTokenCharacter) else {
                throw AuthPlugin.Error(.invalidCredential, "\(name.debugDescription) is not a valid header name")
            }
            try Self.checkValue(value, what: "\(name) header value")
            request.setSensitiveHeaderField(value, for: name, isAbsent: placeIsFree)
        case .query(let name, let value):
            guard !name.isEmpty else {
                throw AuthPlugin.Error(.invalidCredential, "a query credential needs a parameter name")
            }
            guard let url = request.url, var components = URLComponents(url: url, resolvingAgainstBaseURL: true)
            else {
                throw AuthPlugin.Error(.invalidCredential, "the request has no URL to put a query credential in")
            }
            let kept = Self.rawItems(of: components, without: name)
            components.percentEncodedQuery = (kept + [Self.encode(name) + "=" + Self.encode(value)])
                .joined(separator: "&")
            guard let authorized = components.url else {
                throw AuthPlugin.Error(.invalidCredential, "the query credential does not fit the URL")
            }
            request.url = authorized
        }
    }

    /// The `Authorization` value of a bearer or Basic credential, checked as ``authorizing(_:)`` checks it; `nil`
    /// for the other kinds.
    func authorizationValue() throws(AuthPlugin.Error) -> String? {
        switch self {
        case .bearer(let token):
            try Self.checkValue(token, what: "bearer token")
            return "Bearer " + token
        case .basic(let username, let password):
            guard !username.contains(":") else {
                throw AuthPlugin.Error(.invalidCredential, "a Basic username cannot contain a colon (RFC 7617 §2)")
            }
            try Self.checkValue(username + password, what: "Basic username or password")
            return "Basic " + Data((username + ":" + password).utf8).base64EncodedString()
        case .header, .query:
            return nil
        }
    }

    /// Whether the request carries exactly this credential in its place.
    package func isCarried(by request: URLRequest) -> Bool {
        switch self {
        case .bearer(let token):
            guard let carried = request.headerField("Authorization") else { return false }
            // The token refresher asks on every request: the bytes decide unless they differ and one of the two
            // texts is not ASCII (then `==`, which compares canonical equivalents as equal, decides).
            if let same = Self.isBearerValue(carried, of: token) { return same }
            return (try? authorizationValue()).map { carried == $0 } ?? false
        case .basic:
            guard let expected = try? authorizationValue() else { return false }
            return request.headerField("Authorization") == expected
        case .header(let name, let value):
            return request.headerField(name) == value
        case .query(let name, let value):
            guard let url = request.url, let components = URLComponents(url: url, resolvingAgainstBaseURL: true)
            else { return false }
            return Self.queryItems(of: components).contains { $0.name == name && $0.value == value }
        }
    }

    /// Whether this credential goes in the `Authorization` header (bearer and Basic).
    package var goesInAuthorizationHeader: Bool {
        switch self {
        case .bearer, .basic: true
        case .header, .query: false
        }
    }

    /// Whether the request already has something in the place this credential would go.
    package func placeIsTaken(in request: URLRequest) -> Bool {
        switch self {
        case .bearer, .basic:
            return request.headerField("Authorization") != nil
        case .header(let name, _):
            return request.headerField(name) != nil
        case .query(let name, _):
            guard let url = request.url, let components = URLComponents(url: url, resolvingAgainstBaseURL: true)
            else { return false }
            return Self.queryItems(of: components).contains { $0.name == name }
        }
    }

    /// A copy of the request without anything in this credential's place.
    package func removed(from request: URLRequest) -> URLRequest {
        var request = request
        switch self {
        case .bearer, .basic:
            request.setValue(nil, forHTTPHeaderField: "Authorization")
        case .header(let name, _):
            request.setValue(nil, forHTTPHeaderField: name)
        case .query(let name, _):
            guard let url = request.url, var components = URLComponents(url: url, resolvingAgainstBaseURL: true)
            else { return request }
            let kept = Self.rawItems(of: components, without: name)
            components.percentEncodedQuery = kept.isEmpty ? nil : kept.joined(separator: "&")
            request.url = components.url ?? url
        }
        return request
    }

    /// The query items, percent-decoded; `+` is kept as a plus sign.
    private static func queryItems(of components: URLComponents) -> [URLQueryItem] {
        components.queryItems ?? []
    }

    /// The percent-encoded query items, as sent, except those whose decoded name is `name`.
    private static func rawItems(of components: URLComponents, without name: String) -> [String] {
        guard let query = components.percentEncodedQuery, !query.isEmpty else { return [] }
        return query.split(separator: "&", omittingEmptySubsequences: false).map(String.init).filter { item in
            let rawName = item.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
            return (rawName.removingPercentEncoding ?? String(rawName)) != name
        }
    }

    /// Percent-encodes everything but RFC 3986 unreserved characters.
    private static func encode(_ text: String) -> String {
        var unreserved = CharacterSet(charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
        unreserved.insert(charactersIn: "0123456789-._~")
        return text.addingPercentEncoding(withAllowedCharacters: unreserved) ?? text
    }

    /// Header values may not carry control characters other than horizontal tab (RFC 9110 §5.5).
    private static func checkValue(_ value: String, what: String) throws(AuthPlugin.Error) {
        if hasControlCharacters(value) {
            throw AuthPlugin.Error(.invalidCredential, "the \(what) contains control characters")
        }
    }

    /// Whether `value` has a control character (below U+0020 other than the tab, or U+007F), read on its UTF-8
    /// bytes: every byte of a scalar from U+0080 up is 0x80 or more, so a byte below 0x80 is a whole ASCII scalar.
    private static func hasControlCharacters(_ value: String) -> Bool {
        value.utf8.withContiguousStorageIfAvailable(hasControlBytes) ?? value.utf8.contains(where: isControlByte)
    }

    private static func isControlByte(_ byte: UInt8) -> Bool { (byte < 0x20 && byte != 0x09) || byte == 0x7f }

    private static func hasControlBytes(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        bytes.contains(where: isControlByte)
    }

    /// Whether `carried` is `Bearer <token>` and the token may be sent, as `carried == "Bearer " + token` (with the
    /// token's control-character check) answers; `nil` when the bytes differ and either text is not ASCII, where
    /// only `==` can tell (it compares canonically equivalent texts as equal).
    private static func isBearerValue(_ carried: String, of token: String) -> Bool? {
        let answer = carried.utf8.withContiguousStorageIfAvailable { carried in
            token.utf8.withContiguousStorageIfAvailable { token in isBearerValue(carried, of: token) } ?? nil
        }
        return answer ?? nil
    }

    private static func isBearerValue(
        _ carried: UnsafeBufferPointer<UInt8>,
        of token: UnsafeBufferPointer<UInt8>
    )
        -> Bool?
    {
        // Compared index by index: `elementsEqual` of a `String.UTF8View` prefix and of slices was most of the
        // refresher's check per request.
        let prefix: StaticString = "Bearer "
        let prefixCount = prefix.utf8CodeUnitCount
        if carried.count == prefixCount + token.count, isSame(carried, prefix, token) {
            return !hasControlBytes(token)
        }
        let ascii = carried.allSatisfy { $0 < 0x80 } && token.allSatisfy { $0 < 0x80 }
        return ascii ? false : nil
    }

    /// Whether `carried`, whose length is the two parts' together, is `prefix` followed by `token`, byte for byte.
    private static func isSame(
        _ carried: UnsafeBufferPointer<UInt8>,
        _ prefix: StaticString,
        _ token: UnsafeBufferPointer<UInt8>
    ) -> Bool {
        let prefixCount = prefix.utf8CodeUnitCount
        let prefixBytes = prefix.utf8Start
        for index in 0..<prefixCount where carried[index] != prefixBytes[index] { return false }
        for index in 0..<token.count where carried[prefixCount + index] != token[index] { return false }
        return true
    }

    /// RFC 9110 §5.6.2 `tchar`.
    private static func isTokenCharacter(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar {
        case "a"..."z", "A"..."Z", "0"..."9": true
        case "!", "#", "$", "%", "&", "'", "*", "+", "-", ".", "^", "_", "`", "|", "~": true
        default: false
        }
    }
}
