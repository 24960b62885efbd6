import Foundation
import NetworkAgent

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What a stored response is filed under: the request method, the normalised URL, a fingerprint of the request's
/// credentials and the values of the request headers the response varies on (RFC 9111 §2, §4.1).
///
/// - The **primary key** (``primary``) is the method, the URL and the credential fingerprint. The URL is normalised
///   (lowercase scheme and host, no default port, no fragment, `/` for an empty path); the query is kept as sent,
///   since the core already orders query keys deterministically and reordering could merge distinct resources.
/// - The **credential fingerprint** is a SHA-256 of the `Authorization`, `Proxy-Authorization` and `Cookie`
///   values, so two users of one app never share an entry, and the credential itself is never written to disk.
/// - The **variant** is a SHA-256 of the values, in the request, of the headers named by the response's `Vary`
///   (names lowercased and sorted; values with whitespace around commas removed; an absent header differs from
///   an empty one). Hashing keeps varied credentials (`Vary: Cookie`) off the disk as well.
public struct CacheKey: Hashable, Sendable {
    /// The request method, uppercased: `GET` or `HEAD`.
    public let method: String
    /// The normalised URL.
    public let url: String
    /// Hex SHA-256 of the request's credentials, or empty for a request without any.
    public let credential: String
    /// The lowercased, sorted header names the response varies on; empty when it has no `Vary`.
    public let varyNames: [String]
    /// Hex SHA-256 of the request's values of ``varyNames``; empty when ``varyNames`` is.
    public let variant: String

    /// The header fields whose values always make up the credential fingerprint; every header a request marks
    /// sensitive (`URLRequest.sensitiveHeaderNames`, such as an auth plugin's `X-API-Key`) joins them.
    public static let credentialHeaders = ["Authorization", "Proxy-Authorization", "Cookie"]

    /// The method, URL and credential fingerprint: every variant of one resource for one user shares it.
    ///
    /// Worked out once, when the key is made: a miss reads it four times (the lookup, the miss registry twice, the
    /// removal of the variant it replaces), and each reading built the string anew. It follows from the other
    /// parts, so equality and hashing leave it out.
    public let primary: String

    /// A stable identifier of this exact entry (primary key and variant), 64 hex digits; a disk store's file name.
    public var identifier: String {
        // The three parts hashed in turn: the same bytes as their concatenation, without building it.
        var hasher = SHA256()
        hasher.update(primary)
        hasher.update("\n")
        hasher.update(variant)
        return hasher.finalizeHex()
    }

    /// Creates a key from its parts, as read back from storage.
    ///
    /// - Parameters:
    ///   - method: The request method.
    ///   - url: The normalised URL.
    ///   - credential: The credential fingerprint, or empty.
    ///   - varyNames: The lowercased, sorted varying header names.
    ///   - variant: The digest of the varying header values, or empty.
    public init(method: String, url: String, credential: String, varyNames: [String], variant: String) {
        self.method = method
        self.url = url
        self.credential = credential
        self.varyNames = varyNames
        self.variant = variant
        self.primary = Self.primary(method: method, url: url, credential: credential)
    }

    /// ``primary`` of the given parts.
    static func primary(method: String, url: String, credential: String) -> String {
        credential.isEmpty ? "\(method) \(url)" : "\(method) \(url) #\(credential)"
    }

    /// Whether two keys have equal parts (``primary`` follows from them).
    ///
    /// - Parameters:
    ///   - lhs: A key.
    ///   - rhs: Another key.
    /// - Returns: Whether the method, URL, credential, vary names and variant are equal.
    public static func == (lhs: CacheKey, rhs: CacheKey) -> Bool {
        lhs.method == rhs.method && lhs.url == rhs.url && lhs.credential == rhs.credential
            && lhs.varyNames == rhs.varyNames && lhs.variant == rhs.variant
    }

    /// Hashes the parts that ``==(_:_:)`` compares.
    ///
    /// - Parameter hasher: The hasher.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(method)
        hasher.combine(url)
        hasher.combine(credential)
        hasher.combine(varyNames)
        hasher.combine(variant)
    }

    /// The key of a request's entry, given the header names a stored response varies on.
    ///
    /// - Parameters:
    ///   - request: The request.
    ///   - varyNames: The header names the response varies on (any case, any order); empty for none.
    /// - Returns: The key, or `nil` when the request has no absolute http(s) URL.
    public init?(request: URLRequest, varyNames: [String] = []) {
        self.init(request: request, fields: RequestFields(request), varyNames: varyNames)
    }

    /// ``init(request:varyNames:)`` with the request's header fields already taken out of it.
    init?(request: URLRequest, fields: RequestFields, varyNames: [String] = []) {
        guard let url = request.url, let normalized = Self.normalizedURL(url) else { return nil }
        let names = Self.normalizedVaryNames(varyNames)
        self.init(
            method: (request.httpMethod ?? "GET").uppercased(),
            url: normalized,
            credential: Self.credentialFingerprint(of: request, fields: fields),
            varyNames: names,
            variant: Self.variantDigest(of: fields, names: names)
        )
    }

    /// The header names listed in `Vary` field values, lowercased, deduplicated and sorted (`*` kept).
    static func varyNames(fromField value: String?) -> [String] {
        guard let value else { return [] }
        return normalizedVaryNames(value.split(separator: ",").map(String.init))
    }

    private static func normalizedVaryNames(_ names: [String]) -> [String] {
        guard !names.isEmpty else { return [] }
        return Array(Set(names.map { $0.trimmingCharacters(in: .whitespaces).lowercased() }.filter { !$0.isEmpty }))
            .sorted()
    }

    /// A URL in the form keys use: lowercase scheme and host, no default port, no fragment, `/` for no path.
    ///
    /// - Parameter url: An absolute URL.
    /// - Returns: The normalised text, or `nil` for anything but an absolute http(s) URL.
    static func normalizedURL(_ url: URL) -> String? {
        let text = url.absoluteString
        return isNormalized(text) ? text : normalizedURLByComponents(url)
    }

    /// ``normalizedURL(_:)`` through `URLComponents`, for any URL.
    static func normalizedURLByComponents(_ url: URL) -> String? {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: true),
            let scheme = components.scheme?.lowercased(), scheme == "http" || scheme == "https",
            let host = components.host, !host.isEmpty
        else { return nil }
        components.scheme = scheme
        components.host = host.lowercased()
        if (scheme == "http" && components.port == 80) || (scheme == "https" && components.port == 443) {
            components.port = nil
        }
        components.fragment = nil
        components.user = nil
        components.password = nil
        if components.percentEncodedPath.isEmpty { components.percentEncodedPath = "/" }
        return components.string
    }

    /// Whether a URL's text is already in the normalised form, checked on its bytes without `URLComponents` (which
    /// costs microseconds per call): `http` or `https` in lowercase, a host of lowercase letters, digits, dots and
    /// hyphens (no IDNA label), a port only when it is not the scheme's default, no user or password, a path, plain URL
    /// characters after it and no fragment or dot segment. Anything else takes the `URLComponents` path, whose result
    /// for such a text is the text itself.
    static func isNormalized(_ text: String) -> Bool {
        var text = text
        // One pass over contiguous UTF-8 (a native string's own storage): generic `Substring.UTF8View` algorithms
        // (`split`, `allSatisfy`) cost more than a microsecond per URL here, on every lookup and miss.
        return text.withUTF8 { isNormalized(bytes: $0) }
    }

    /// ``isNormalized(_:)`` on a URL's UTF-8 bytes.
    private static func isNormalized(bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        let count = bytes.count
        var index: Int
        let isHTTPS: Bool
        if startsWith(bytes, "http://") {
            isHTTPS = false
            index = 7
        } else if startsWith(bytes, "https://") {
            isHTTPS = true
            index = 8
        } else {
            return false
        }
        // The host: dot-separated labels of lowercase letters, digits and inner hyphens, none starting `xn--`.
        var labelStart = index
        while true {
            guard index < count else { return false }  // no path
            let byte = bytes[index]
            if byte == UInt8(ascii: ".") || byte == UInt8(ascii: ":") || byte == UInt8(ascii: "/") {
                guard isHostLabel(bytes, from: labelStart, to: index) else { return false }
                if byte != UInt8(ascii: ".") { break }
                labelStart = index + 1
            } else if !isLowercaseLetterOrDigit(byte) && byte != UInt8(ascii: "-") {
                return false
            }
            index += 1
        }
        if bytes[index] == UInt8(ascii: ":") {
            // A port: 1-5 digits without a leading zero, at most 65535, not the scheme's default.
            index += 1
            var port = 0
            var digits = 0
            while index < count, bytes[index] != UInt8(ascii: "/") {
                let byte = bytes[index]
                guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9"), digits < 5,
                    digits > 0 || byte != UInt8(ascii: "0")
                else { return false }
                port = port * 10 + Int(byte - UInt8(ascii: "0"))
                digits += 1
                index += 1
            }
            guard index < count, digits > 0, port <= 65_535, port != (isHTTPS ? 443 : 80) else { return false }
        }
        // The path and query: plain URL characters, no dot segment (`/.`) anywhere.
        var previous: UInt8 = 0
        while index < count {
            let byte = bytes[index]
            guard isPlainURLCharacter(byte), !(previous == UInt8(ascii: "/") && byte == UInt8(ascii: ".")) else {
                return false
            }
            previous = byte
            index += 1
        }
        return true
    }

    /// Whether `bytes` start with the ASCII `prefix`.
    private static func startsWith(_ bytes: UnsafeBufferPointer<UInt8>, _ prefix: StaticString) -> Bool {
        let length = prefix.utf8CodeUnitCount
        guard bytes.count >= length else { return false }
        let start = prefix.utf8Start
        for offset in 0..<length where bytes[offset] != start[offset] { return false }
        return true
    }

    /// Whether `bytes[from..<to]` is a host label of the normal form: not empty, no hyphen at either end, not an
    /// IDNA label (`xn--`); its characters were checked by the caller.
    private static func isHostLabel(_ bytes: UnsafeBufferPointer<UInt8>, from start: Int, to end: Int) -> Bool {
        guard end > start, bytes[start] != UInt8(ascii: "-"), bytes[end - 1] != UInt8(ascii: "-") else { return false }
        if end - start >= 4, bytes[start] == UInt8(ascii: "x"), bytes[start + 1] == UInt8(ascii: "n"),
            bytes[start + 2] == UInt8(ascii: "-"), bytes[start + 3] == UInt8(ascii: "-")
        {
            return false
        }
        return true
    }

    private static func isLowercaseLetterOrDigit(_ byte: UInt8) -> Bool {
        (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z"))
            || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9"))
    }

    /// RFC 3986's unreserved and reserved characters and `%`, without `#` and `[`/`]`.
    private static func isPlainURLCharacter(_ byte: UInt8) -> Bool {
        if isLowercaseLetterOrDigit(byte) || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z")) { return true }
        return byte < 64
            ? plainPunctuationBelow64 & (1 << UInt64(byte)) != 0
            : byte == UInt8(ascii: "@")
                || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "~")
    }

    /// The bits of `-.!$&'()*+,;=:/?%` (all below 64) in a 64-bit set: a lookup per URL byte instead of a scan of
    /// the list.
    private static let plainPunctuationBelow64: UInt64 = "-.!$&'()*+,;=:/?%".utf8.reduce(0) { $0 | (1 << UInt64($1)) }

    /// The headers whose values make a request one user's: ``credentialHeaders`` and every header the request
    /// marks sensitive (`URLRequest.sensitiveHeaderNames`: an auth plugin's `X-API-Key`, a configuration's
    /// secrets), lowercased, the marked ones sorted after the three.
    ///
    /// - Parameter fields: The request's fields, when the caller has them: a request without the field carrying the
    ///   marks (most) then skips reading the marks, which copies every field out of the request.
    static func credentialNames(of request: URLRequest, fields: RequestFields? = nil) -> [String] {
        if let fields, !fields.contains(URLRequest.sensitiveHeadersField) { return lowercasedCredentialHeaders }
        let marked = request.sensitiveHeaderNames
        guard !marked.isEmpty else { return lowercasedCredentialHeaders }
        let others = Set(marked.map { $0.lowercased() }).subtracting(lowercasedCredentialHeaders)
        return lowercasedCredentialHeaders + others.sorted()
    }

    /// ``credentialHeaders``, lowercased.
    private static let lowercasedCredentialHeaders = credentialHeaders.map { $0.lowercased() }

    /// The hex SHA-256 of the request's lines for ``credentialNames(of:fields:)`` (`name:value` or `name` and a
    /// NUL byte, each ended by a newline), or empty when the request has none of those headers.
    ///
    /// Fed to the hash a piece at a time, the same bytes as the lines' text without building each line; and the
    /// names are not gathered into an array when the marks name only the three ``credentialHeaders``, as an auth
    /// plugin's do (``markedCredentialNames(of:fields:)``). Both were ten allocations per request of a chain with
    /// an auth plugin. The digest must not change: entries stored under it are looked up by it.
    private static func credentialFingerprint(of request: URLRequest, fields: RequestFields) -> String {
        let marked = markedCredentialNames(of: request, fields: fields)
        let authorization = fields.value("authorization")
        let proxyAuthorization = fields.value("proxy-authorization")
        let cookie = fields.value("cookie")
        // Most requests carry none of the names.
        guard
            authorization != nil || proxyAuthorization != nil || cookie != nil
                || marked.contains(where: { fields.value($0) != nil })
        else { return "" }
        var hasher = SHA256()
        hasher.update("networkagent.cache.credential.v1\n")
        addLine(to: &hasher, name: "authorization", value: authorization)
        addLine(to: &hasher, name: "proxy-authorization", value: proxyAuthorization)
        addLine(to: &hasher, name: "cookie", value: cookie)
        for name in marked { addLine(to: &hasher, name: name.lowercased(), value: fields.value(name)) }
        return hasher.finalizeHex()
    }

    /// Adds a credential line's bytes to `hasher`: `name:value` and a newline, or `name`, a NUL byte and a newline
    /// when the request has no such header.
    private static func addLine(to hasher: inout SHA256, name: String, value: String?) {
        hasher.update(name)
        if let value {
            hasher.update(":")
            hasher.update(value)
            hasher.update("\n")
        } else {
            hasher.update("\u{0}\n")
        }
    }

    /// The names ``credentialNames(of:fields:)`` gives after the three ``credentialHeaders``: none when the request
    /// has no marks or marks only those three, decided on the marks' bytes without building their set (the auth
    /// plugin marks `Authorization`); otherwise read as ``credentialNames(of:fields:)`` reads them.
    private static func markedCredentialNames(of request: URLRequest, fields: RequestFields) -> ArraySlice<String> {
        guard let marks = fields.value(URLRequest.sensitiveHeadersField), !marksOnlyCredentialHeaders(marks) else {
            return []
        }
        return credentialNames(of: request, fields: fields).dropFirst(lowercasedCredentialHeaders.count)
    }

    /// Whether every name in a marks field's value (split at commas, trimmed of spaces and tabs, empty ones left
    /// out, compared without ASCII case) is one of the three ``credentialHeaders``; `false` when a byte is not
    /// ASCII, which leaves the answer to the general reading of the marks.
    static func marksOnlyCredentialHeaders(_ marks: String) -> Bool {
        var marks = marks
        return marks.withUTF8 { bytes in
            var start = 0
            while start <= bytes.count {
                var end = start
                while end < bytes.count, bytes[end] != UInt8(ascii: ",") {
                    if bytes[end] >= 0x80 { return false }
                    end += 1
                }
                var first = start
                var last = end
                while first < last, bytes[first] == 0x20 || bytes[first] == 0x09 { first += 1 }
                while last > first, bytes[last - 1] == 0x20 || bytes[last - 1] == 0x09 { last -= 1 }
                if last > first,
                    !(equalsLowercase(bytes, first, last, "authorization")
                        || equalsLowercase(bytes, first, last, "proxy-authorization")
                        || equalsLowercase(bytes, first, last, "cookie"))
                {
                    return false
                }
                start = end + 1
            }
            return true
        }
    }

    /// Whether `bytes[start..<end]`, with `A`-`Z` lowered, is the lowercase ASCII `name`.
    private static func equalsLowercase(
        _ bytes: UnsafeBufferPointer<UInt8>,
        _ start: Int,
        _ end: Int,
        _ name: StaticString
    ) -> Bool {
        guard end - start == name.utf8CodeUnitCount else { return false }
        let expected = name.utf8Start
        for offset in 0..<(end - start) {
            let byte = bytes[start + offset]
            let lowered = byte >= 0x41 && byte <= 0x5a ? byte | 0x20 : byte
            if lowered != expected[offset] { return false }
        }
        return true
    }

    private static func variantDigest(of fields: RequestFields, names: [String]) -> String {
        guard !names.isEmpty else { return "" }
        var hasher = SHA256()
        hasher.update("networkagent.cache.vary.v1\n")
        for name in names {
            if let value = fields.value(name) {
                let normalized = value.split(separator: ",", omittingEmptySubsequences: false)
                    .map { $0.trimmingCharacters(in: .whitespaces) }.joined(separator: ",")
                hasher.update("\(name):\(normalized)\n")
            } else {
                hasher.update("\(name)\u{0}\n")
            }
        }
        return hasher.finalizeHex()
    }
}
