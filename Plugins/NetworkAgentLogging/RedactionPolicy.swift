import NetworkAgent

/// Which header, query parameter and body field values a ``LoggingPlugin`` and
/// ``curlCommand(for:redaction:bodyFileName:)`` hide. On by default; opting out is explicit and per name.
///
/// Names compare case-insensitively (`authorization`, `AUTHORIZATION` and `Authorization` are one name). A hidden
/// value is replaced as a whole by ``placeholder``, never partially.
///
/// ```swift
/// let policy = RedactionPolicy()
///     .redactingHeaders("X-Session")        // hide one more header
///     .revealingQueryParameters("token")    // show `token=` in URLs (explicit, per name)
/// ```
public struct RedactionPolicy: Sendable, Hashable {
    /// What a hidden value prints as: `<redacted>`.
    public static let placeholder = "<redacted>"

    /// Headers hidden by default: `Authorization` and `Proxy-Authorization` (RFC 9110 §11.6.2, §11.7.2), `Cookie`
    /// and `Set-Cookie` (RFC 6265 §5.4, §4.1), `X-API-Key`, `X-Auth-Token`, `X-Access-Token`, `X-CSRF-Token`,
    /// `X-Amz-Security-Token` (AWS temporary credentials) and `X-Goog-Api-Key` (Google APIs). Headers a request marks
    /// sensitive (`URLRequest.sensitiveHeaderNames`, set by the auth plugin for its credential) are hidden too.
    public static let defaultHeaderNames: Set<String> = [
        "authorization", "proxy-authorization", "cookie", "set-cookie", "x-api-key", "x-auth-token", "x-access-token",
        "x-csrf-token", "x-amz-security-token", "x-goog-api-key",
    ]

    /// Query parameters, form fields and JSON body fields hidden by default: `token`, `access_token`,
    /// `refresh_token` and `id_token` (RFC 6749 §5.1, RFC 6750 §2.3, OpenID Connect), `client_secret`
    /// (RFC 6749 §2.3.1), `code` (RFC 6749 §4.1.2), `code_verifier` (RFC 7636 §4.5), `client_assertion`
    /// (RFC 7521 §4.2), `api_key`, `apikey`, `password` and `secret`.
    public static let defaultParameterNames: Set<String> = [
        "token", "access_token", "refresh_token", "id_token", "client_secret", "code", "code_verifier",
        "client_assertion", "api_key", "apikey", "password", "secret",
    ]

    /// The header names whose values are hidden, lowercased.
    public internal(set) var headerNames: Set<String>
    /// The query parameter and form field names whose values are hidden, lowercased.
    public internal(set) var queryParameterNames: Set<String>
    /// The JSON body field names whose values are hidden at any depth, lowercased.
    public internal(set) var bodyFieldNames: Set<String>
    /// Whether a password in a URL's user information is hidden; only a cURL command without redaction shows it.
    var redactsURLPassword = true

    /// Whether nothing at all is hidden (a cURL command without redaction): bodies of any text type print as they are.
    var hidesNothing: Bool {
        headerNames.isEmpty && queryParameterNames.isEmpty && bodyFieldNames.isEmpty && !redactsURLPassword
    }

    /// The default policy: ``defaultHeaderNames`` for headers, ``defaultParameterNames`` for query parameters,
    /// form fields and JSON body fields. URL passwords (`https://user:password@host`) are always hidden.
    public init() {
        headerNames = Self.defaultHeaderNames
        queryParameterNames = Self.defaultParameterNames
        bodyFieldNames = Self.defaultParameterNames
    }

    /// This policy, also hiding the given headers.
    ///
    /// - Parameter names: Header names, in any case.
    /// - Returns: The extended policy.
    public func redactingHeaders(_ names: String...) -> RedactionPolicy {
        var policy = self
        policy.headerNames.formUnion(names.map { $0.lowercased() })
        return policy
    }

    /// This policy, showing the given headers in clear. Only the names listed are affected.
    ///
    /// - Parameter names: Header names, in any case.
    /// - Returns: The relaxed policy.
    public func revealingHeaders(_ names: String...) -> RedactionPolicy {
        var policy = self
        policy.headerNames.subtract(names.map { $0.lowercased() })
        return policy
    }

    /// This policy, also hiding the given query parameters and form fields.
    ///
    /// - Parameter names: Parameter names, in any case.
    /// - Returns: The extended policy.
    public func redactingQueryParameters(_ names: String...) -> RedactionPolicy {
        var policy = self
        policy.queryParameterNames.formUnion(names.map { $0.lowercased() })
        return policy
    }

    /// This policy, showing the given query parameters and form fields in clear.
    ///
    /// - Parameter names: Parameter names, in any case.
    /// - Returns: The relaxed policy.
    public func revealingQueryParameters(_ names: String...) -> RedactionPolicy {
        var policy = self
        policy.queryParameterNames.subtract(names.map { $0.lowercased() })
        return policy
    }

    /// This policy, also hiding the given JSON body fields, at any depth.
    ///
    /// - Parameter names: Field names, in any case.
    /// - Returns: The extended policy.
    public func redactingBodyFields(_ names: String...) -> RedactionPolicy {
        var policy = self
        policy.bodyFieldNames.formUnion(names.map { $0.lowercased() })
        return policy
    }

    /// This policy, showing the given JSON body fields in clear.
    ///
    /// - Parameter names: Field names, in any case.
    /// - Returns: The relaxed policy.
    public func revealingBodyFields(_ names: String...) -> RedactionPolicy {
        var policy = self
        policy.bodyFieldNames.subtract(names.map { $0.lowercased() })
        return policy
    }

    /// Whether a header's value is hidden.
    ///
    /// - Parameter name: A header name, in any case.
    /// - Returns: `true` when the value prints as ``placeholder``.
    public func redactsHeader(_ name: String) -> Bool {
        headerNames.contains(name.lowercased())
    }

    /// Whether a query parameter's or form field's value is hidden.
    ///
    /// - Parameter name: A parameter name, in any case (percent-decoded).
    /// - Returns: `true` when the value prints as ``placeholder``.
    public func redactsQueryParameter(_ name: String) -> Bool {
        queryParameterNames.contains(name.lowercased())
    }

    /// Whether a JSON body field's value is hidden.
    ///
    /// - Parameter name: A field name, in any case.
    /// - Returns: `true` when the value prints as ``placeholder``.
    public func redactsBodyField(_ name: String) -> Bool {
        bodyFieldNames.contains(name.lowercased())
    }
}
