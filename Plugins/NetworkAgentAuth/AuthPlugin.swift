import Foundation
import NetworkAgent

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Adds a credential to requests, only where it may go: to the endpoint's own origin (or an allow-list), never
/// over plain `http://` to another machine, never over a header the request already has.
///
/// In ``onRequest(_:endpoint:)``, for each request:
/// 1. An endpoint adopting ``AuthorizableEndpoint`` with ``AuthorizationRequirement/none`` gets nothing.
/// 2. A request whose origin (scheme, host and port, RFC 6454) is neither the endpoint `baseURL`'s nor one of
///    ``additionalOrigins`` gets nothing: a plugin that pointed it at a mirror or a CDN does not leak the
///    credential there.
/// 3. A request that already carries an `Authorization` header keeps it and gets nothing more: what the
///    endpoint (or an earlier plugin) set wins. So does an existing header or query parameter of the name a
///    ``Credential/header(name:value:)`` or ``Credential/query(name:value:)`` credential would set.
/// 4. The credential is the endpoint's ``AuthorizationRequirement/credential(_:)`` or else the provider's;
///    `nil` sends the request without one.
/// 5. Over plain `http://` to a host that is not loopback (`localhost`, `127.0.0.0/8`, `::1`) and not in
///    ``plainHTTPHosts``, the call fails with ``Error/Code/insecureTransport`` before anything is sent, rather
///    than sending in clear text or silently without the credential.
///
/// Register it after plugins that change URLs in `onRequest`. Every credential header it adds is marked in
/// `URLRequest.sensitiveHeaderNames`, so the URL session transport drops it on a redirect to another origin (or from
/// `https` to `http`) and the logging plugin redacts it. Emits `auth.credential_added` (attribute `scheme`) and `auth.credential_withheld`
/// (attribute `reason`: `opted_out`, `other_origin`, `already_present`, `no_credential`).
///
/// ```swift
/// let provider = NetworkAgentProvider<Api>(plugins: [
///     .auth { try await keychain.accessToken().map(Credential.bearer) }
/// ])
/// ```
public struct AuthPlugin: NetworkAgentPlugin {
    /// Supplies the credential for a request, or `nil` for none; called once per authorized request, possibly
    /// from many tasks at once.
    public typealias CredentialProvider = @Sendable () async throws -> Credential?

    /// An error of the auth plugin: the credential could not or must not be sent.
    public struct Error: Swift.Error, Sendable, CustomStringConvertible {
        /// What went wrong.
        public struct Code: Hashable, Sendable, CustomStringConvertible {
            private let name: String

            /// A credential would have gone over plain `http://` to a host that is not loopback and not allowed.
            public static let insecureTransport = Code(name: "insecure_transport")
            /// The credential cannot be put in a request (a colon in a Basic username, control characters, an
            /// invalid header name).
            public static let invalidCredential = Code(name: "invalid_credential")

            /// A short, stable name safe as a metrics label, e.g. `insecure_transport`.
            public var description: String { name }
        }

        /// What went wrong.
        public let code: Code
        /// A human-readable explanation. Never contains the secret.
        public let message: String

        /// Creates an error.
        ///
        /// - Parameters:
        ///   - code: What went wrong.
        ///   - message: A human-readable explanation, without secrets.
        public init(_ code: Code, _ message: String) {
            self.code = code
            self.message = message
        }

        /// `AuthPlugin.Error(code): message`.
        public var description: String { "AuthPlugin.Error(\(code)): \(message)" }
    }

    /// Origins besides each endpoint's `baseURL` origin that receive credentials (only the scheme, host and port
    /// of each URL count).
    public let additionalOrigins: [URL]
    /// Hosts (lowercased) that may receive credentials over plain `http://` although they are not loopback.
    public let plainHTTPHosts: Set<String>
    private let source: CredentialSource
    private let origins: Set<Origin>
    /// The origins of the endpoint `baseURL`s met so far, by their text, with this plugin's answer to whether a
    /// credential may travel there (``KnownOrigin``): shared by the plugin's copies.
    private let knownBases = Locked([String: KnownOrigin]())

    /// An endpoint `baseURL`'s origin and whether a credential may go to it over its scheme: `https`, a loopback
    /// host or one of ``plainHTTPHosts``.
    ///
    /// Both follow from the URL's text and the plugin's configuration alone, so they are worked out once per
    /// `baseURL` (a host parse with percent-decoding and lowercasing, and the loopback check, were a quarter of the
    /// plugin's own CPU per request) and reused for every request whose URL begins with that `baseURL`'s scheme and
    /// authority (``startsWithAuthority(of:_:)``): such a request's origin is the `baseURL`'s.
    private struct KnownOrigin: Sendable {
        let origin: Origin
        let mayCarryCredential: Bool
    }

    /// The most `baseURL`s ``knownBases`` holds (an app has a few); past it, it starts over.
    private static let maximumKnownBases = 64

    /// Creates an auth plugin.
    ///
    /// - Parameters:
    ///   - additionalOrigins: Origins besides each endpoint's `baseURL` origin that receive credentials.
    ///   - plainHTTPHosts: Non-loopback hosts that may receive credentials over plain `http://`; empty by default.
    ///   - credential: Supplies the credential, e.g. from a keychain or an actor; `nil` sends none.
    public init(
        additionalOrigins: [URL] = [],
        plainHTTPHosts: Set<String> = [],
        credential: @escaping CredentialProvider
    ) {
        self.init(additionalOrigins: additionalOrigins, plainHTTPHosts: plainHTTPHosts, source: .provider(credential))
    }

    /// Where the plugin's credential comes from: what ``init(additionalOrigins:plainHTTPHosts:credential:)`` was
    /// given, a fixed credential (``auth(_:additionalOrigins:plainHTTPHosts:)``, whose closure only returned it), or
    /// a synchronous source such as a token refresher's published state.
    package enum CredentialSource: Sendable {
        /// The caller's provider, called (and awaited) once per authorized request.
        case provider(CredentialProvider)
        /// One credential for every request, prepared once.
        case fixed(PreparedCredential)
        /// Called once per authorized request, without a suspension; `nil` sends none.
        case immediate(@Sendable () throws -> PreparedCredential?)
    }

    /// Creates an auth plugin with a credential source of any kind (the public initializer's is a provider).
    ///
    /// - Parameters:
    ///   - additionalOrigins: Origins besides each endpoint's `baseURL` origin that receive credentials.
    ///   - plainHTTPHosts: Non-loopback hosts that may receive credentials over plain `http://`.
    ///   - source: Where the credential comes from.
    package init(additionalOrigins: [URL], plainHTTPHosts: Set<String>, source: CredentialSource) {
        self.additionalOrigins = additionalOrigins
        self.plainHTTPHosts = Set(plainHTTPHosts.map { $0.lowercased() })
        self.source = source
        self.origins = Set(additionalOrigins.compactMap(Origin.init))
    }

    /// Adds the credential where the rules above allow it.
    ///
    /// - Parameters:
    ///   - request: The request so far.
    ///   - endpoint: The endpoint of the call.
    /// - Returns: The request, with the credential or unchanged.
    /// - Throws: ``Error`` (``Error/Code/insecureTransport``, ``Error/Code/invalidCredential``), or what the
    ///   credential provider throws, unchanged.
    public func onRequest(
        _ request: consuming URLRequest,
        endpoint: any NetworkAgentEndpoint
    ) async throws -> URLRequest {
        let requirement = Self.requirement(of: endpoint)
        if requirement == .none {
            return Self.withheld(request, reason: "opted_out")
        }
        guard let url = request.url, let allowed = allowedOrigin(of: url, endpoint: endpoint) else {
            return Self.withheld(request, reason: "other_origin")
        }
        let origin = allowed.origin
        // One pass over the field names says whether `Authorization` and the sensitive mark are there (`nil` when a
        // name is not ASCII: then Foundation's rules decide, as before).
        var fields = request.allHTTPHeaderFields ?? [:]
        let scan = AuthorizationFieldScan(fields)
        if scan?.hasAuthorization ?? (HTTPFieldName.value(of: "Authorization", in: fields) != nil) {
            return Self.withheld(request, reason: "already_present")
        }
        let prepared: PreparedCredential?
        switch requirement {
        case .credential(let chosen): prepared = PreparedCredential(chosen)
        case .default, .none:
            switch source {
            case .provider(let provider): prepared = try await provider().map(PreparedCredential.init)
            case .fixed(let fixed): prepared = fixed
            case .immediate(let immediate): prepared = try immediate()
            }
        }
        guard let prepared else {
            return Self.withheld(request, reason: "no_credential")
        }
        let credential = prepared.credential
        // A bearer or Basic credential's place, `Authorization`, was found free above.
        if !credential.goesInAuthorizationHeader, credential.placeIsTaken(in: request) {
            return Self.withheld(request, reason: "already_present")
        }
        guard allowed.mayCarryCredential else {
            throw Error(
                .insecureTransport,
                "refusing to send a credential over \(origin.scheme):// to \(origin.host); "
                    + "use https or list the host in plainHTTPHosts"
            )
        }
        if let value = prepared.authorizationValue, let scan, !scan.hasMark, let mark = Self.authorizationMark {
            // What `setSensitiveHeaderField(value, for: "Authorization", isAbsent: true)` does to fields with neither
            // `Authorization` nor a mark (found above, on ASCII names): file the field under its own spelling, then
            // the mark that core's code made for `Authorization` (read back once from that code). The request lets
            // go of its dictionary first, so that `fields` is its only reference and grows in place.
            request.allHTTPHeaderFields = nil
            fields["Authorization"] = value
            fields[mark.name] = mark.value
            request.allHTTPHeaderFields = fields
        } else {
            // Its place was found free above (`Authorization`, or `placeIsTaken`).
            try credential.authorize(&request, placeIsFree: true)
        }
        if NetworkAgentEvents.hasObservers {
            NetworkAgentEvents.emit(
                NetworkAgentEvent(source: "auth", name: "credential_added", attributes: ["scheme": credential.scheme])
            )
        }
        return request
    }

    /// The mark field's name and value that `URLRequest.setSensitiveHeaderField(_:for:isAbsent:)` adds when it files
    /// `Authorization` on a request without a mark, worked out once by that very function on a request with no other
    /// field; `nil` (and the plugin calls the function every time) if it did anything else.
    static let authorizationMark: (name: String, value: String)? = {
        guard let url = URL(string: "http://localhost/") else { return nil }
        var probe = URLRequest(url: url)
        probe.allHTTPHeaderFields = [:]
        probe.setSensitiveHeaderField("probe", for: "Authorization", isAbsent: true)
        guard let fields = probe.allHTTPHeaderFields, fields.count == 2, fields["Authorization"] == "probe",
            let mark = fields.first(where: { $0.key != "Authorization" }),
            HTTPFieldName.equal(mark.key, URLRequest.sensitiveHeadersField)
        else { return nil }
        return (mark.key, mark.value)
    }()

    /// What `endpoint` asks of the plugin: its ``AuthorizableEndpoint/authorization``, or
    /// ``AuthorizationRequirement/default`` when its type does not adopt ``AuthorizableEndpoint``.
    ///
    /// The types that do not adopt it are remembered (by their metatype's identity), so that the conformance cast,
    /// which searches the conformance records when it fails (slow on Linux), runs once per type instead of once per
    /// request. Only the failures are remembered: the answer of a type that adopts the protocol varies per endpoint.
    package static func requirement(of endpoint: any NetworkAgentEndpoint) -> AuthorizationRequirement {
        let type = ObjectIdentifier(Swift.type(of: endpoint))
        if nonAuthorizableTypes.withLock({ $0.contains(type) }) {
            return .default
        }
        if let authorizable = endpoint as? any AuthorizableEndpoint {
            return authorizable.authorization
        }
        nonAuthorizableTypes.withLock { types in
            if types.count < maximumRememberedTypes { types.insert(type) }
        }
        return .default
    }

    /// The endpoint types seen so far that do not adopt ``AuthorizableEndpoint``.
    private static let nonAuthorizableTypes = Locked(Set<ObjectIdentifier>())
    /// The most types ``nonAuthorizableTypes`` remembers (an app has a few endpoint types); beyond, the cast runs.
    private static let maximumRememberedTypes = 1_024

    /// Whether `url`, whose origin is `origin`, receives credentials for an endpoint.
    package func isAllowed(_ origin: Origin, of url: URL, endpoint: any NetworkAgentEndpoint) -> Bool {
        let base = endpoint.baseURL
        return Self.startsWithAuthority(of: base, url) || Origin(base) == origin || origins.contains(origin)
    }

    /// The origin of `url` and whether a credential may travel to it over its scheme, when `url` receives
    /// credentials for the endpoint (``isAllowed(_:of:endpoint:)``); `nil` when it does not or has no origin.
    ///
    /// A request to its endpoint's own `baseURL` scheme and authority (most) takes the `baseURL`'s remembered
    /// origin (``KnownOrigin``); any other works both out as ``isAllowed(_:of:endpoint:)`` does.
    package func allowedOrigin(
        of url: URL,
        endpoint: any NetworkAgentEndpoint
    ) -> (origin: Origin, mayCarryCredential: Bool)? {
        let base = endpoint.baseURL
        let baseText = base.absoluteString
        if Self.startsWithAuthority(of: baseText, url.absoluteString),
            let known = knownOrigin(of: base, text: baseText)
        {
            return (known.origin, known.mayCarryCredential)
        }
        guard let origin = Origin(url), Origin(base) == origin || origins.contains(origin) else { return nil }
        return (origin, mayCarryCredential(to: origin))
    }

    /// Whether a credential may go to `origin` over its scheme: `https`, a loopback host or one of
    /// ``plainHTTPHosts``.
    package func mayCarryCredential(to origin: Origin) -> Bool {
        origin.isSecure || origin.isLoopback || plainHTTPHosts.contains(origin.host)
    }

    /// The remembered ``KnownOrigin`` of an endpoint `baseURL` whose text is `text`, worked out on first use; `nil`
    /// when the URL has no origin (no host).
    private func knownOrigin(of base: URL, text: String) -> KnownOrigin? {
        if let known = knownBases.withLock({ $0[text] }) { return known }
        guard let origin = Origin(base) else { return nil }
        let known = KnownOrigin(origin: origin, mayCarryCredential: mayCarryCredential(to: origin))
        knownBases.withLock { bases in
            if bases.count >= Self.maximumKnownBases { bases.removeAll() }
            bases[text] = known
        }
        return known
    }

    /// Whether `url`'s text begins with `base`'s scheme, `://` and non-empty authority, byte for byte, and its
    /// authority ends there too: then both URLs have one origin, known without working out `base`'s (most requests
    /// go to their endpoint's own `baseURL`). `false` says nothing.
    package static func startsWithAuthority(of base: URL, _ url: URL) -> Bool {
        startsWithAuthority(of: base.absoluteString, url.absoluteString)
    }

    /// ``startsWithAuthority(of:_:)`` of the two URLs' texts.
    private static func startsWithAuthority(of baseText: String, _ text: String) -> Bool {
        let answer = baseText.utf8.withContiguousStorageIfAvailable { base in
            text.utf8.withContiguousStorageIfAvailable { text in startsWithAuthority(of: base, text) }
        }
        return (answer ?? nil) ?? false
    }

    /// The same on the two URLs' bytes.
    private static func startsWithAuthority(
        of base: UnsafeBufferPointer<UInt8>,
        _ text: UnsafeBufferPointer<UInt8>
    )
        -> Bool
    {
        func isSchemeByte(_ byte: UInt8) -> Bool {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."):
                true
            default: false
            }
        }
        func endsAuthority(_ byte: UInt8) -> Bool {
            byte == UInt8(ascii: "/") || byte == UInt8(ascii: "?") || byte == UInt8(ascii: "#")
        }
        var colon = 0
        while colon < base.count, isSchemeByte(base[colon]) { colon += 1 }
        guard colon > 0, colon + 3 <= base.count, base[colon] == UInt8(ascii: ":"),
            base[colon + 1] == UInt8(ascii: "/"),
            base[colon + 2] == UInt8(ascii: "/")
        else { return false }
        var authorityEnd = colon + 3
        while authorityEnd < base.count, !endsAuthority(base[authorityEnd]) { authorityEnd += 1 }
        guard authorityEnd > colon + 3, text.count >= authorityEnd else { return false }
        for index in 0..<authorityEnd where base[index] != text[index] { return false }
        return text.count == authorityEnd || endsAuthority(text[authorityEnd])
    }

    private static func withheld(_ request: URLRequest, reason: String) -> URLRequest {
        if NetworkAgentEvents.hasObservers {
            NetworkAgentEvents.emit(
                NetworkAgentEvent(source: "auth", name: "credential_withheld", attributes: ["reason": reason])
            )
        }
        return request
    }
}

extension NetworkAgentPlugin where Self == AuthPlugin {
    /// A plugin that adds the provider's credential to requests for the endpoint's own origin.
    ///
    /// - Parameters:
    ///   - additionalOrigins: Origins besides each endpoint's `baseURL` origin that receive credentials.
    ///   - plainHTTPHosts: Non-loopback hosts that may receive credentials over plain `http://`.
    ///   - credential: Supplies the credential; `nil` sends none.
    /// - Returns: An ``AuthPlugin``.
    public static func auth(
        additionalOrigins: [URL] = [],
        plainHTTPHosts: Set<String> = [],
        _ credential: @escaping AuthPlugin.CredentialProvider
    ) -> AuthPlugin {
        AuthPlugin(additionalOrigins: additionalOrigins, plainHTTPHosts: plainHTTPHosts, credential: credential)
    }

    /// A plugin that adds a fixed credential to requests for the endpoint's own origin.
    ///
    /// - Parameters:
    ///   - credential: The credential.
    ///   - additionalOrigins: Origins besides each endpoint's `baseURL` origin that receive it.
    ///   - plainHTTPHosts: Non-loopback hosts that may receive it over plain `http://`.
    /// - Returns: An ``AuthPlugin``.
    public static func auth(
        _ credential: Credential,
        additionalOrigins: [URL] = [],
        plainHTTPHosts: Set<String> = []
    ) -> AuthPlugin {
        // The closure would only return the credential: it is prepared once instead (its `Authorization` value).
        AuthPlugin(
            additionalOrigins: additionalOrigins,
            plainHTTPHosts: plainHTTPHosts,
            source: .fixed(PreparedCredential(credential))
        )
    }
}
