import Foundation
import NetworkAgent
import NetworkAgentAuth
import NetworkAgentTesting
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Rules that need hosts the loopback server cannot be: plain http to other machines, and pure logic.
@Suite struct AuthRulesTests {
    func run(
        _ plugin: AuthPlugin,
        base: String
    ) async throws -> (stub: StubTransport, result: Result<Void, any Error>) {
        let stub = StubTransport(fallback: .status(200))
        let provider = NetworkAgentProvider<AuthEndpoint>(plugins: [plugin], agent: NetworkAgent(transport: stub))
        let endpoint = AuthEndpoint(baseURL: try #require(URL(string: base)))
        do {
            _ = try await provider.request(endpoint: endpoint)
            return (stub, .success(()))
        } catch {
            return (stub, .failure(error))
        }
    }

    @Test func plainHTTPToAnotherMachineIsRefusedBeforeSending() async throws {
        let (stub, result) = try await run(.auth(.bearer("t")), base: "http://api.example.com")
        guard case .failure(let error) = result else {
            Issue.record("expected a failure")
            return
        }
        let authError = try #require(error as? AuthPlugin.Error)
        #expect(authError.code == .insecureTransport)
        #expect(!authError.description.contains("t\""))
        #expect(stub.requests.isEmpty)
    }

    @Test func plainHTTPIsAllowedForListedHosts() async throws {
        let (stub, result) = try await run(
            .auth(.bearer("t"), plainHTTPHosts: ["API.example.com"]),
            base: "http://api.example.com"
        )
        #expect((try? result.get()) != nil)
        #expect(stub.requests.first?.value(forHTTPHeaderField: "Authorization") == "Bearer t")
    }

    @Test(arguments: ["http://localhost:8080", "http://127.0.0.2", "http://[::1]:9000", "http://app.localhost"])
    func plainHTTPToLoopbackIsAllowed(base: String) async throws {
        let (stub, result) = try await run(.auth(.bearer("t")), base: base)
        #expect((try? result.get()) != nil)
        #expect(stub.requests.first?.value(forHTTPHeaderField: "Authorization") == "Bearer t")
    }

    @Test(arguments: ["http://127.0.0.1.example.com", "http://10.0.0.1", "http://localhost.example.com"])
    func lookAlikesAreNotLoopback(base: String) async throws {
        let (stub, result) = try await run(.auth(.bearer("t")), base: base)
        guard case .failure(let error) = result else {
            Issue.record("the credential went over plain HTTP to \(base)")
            return
        }
        let authError = try #require(error as? AuthPlugin.Error, "\(error)")
        #expect(authError.code == .insecureTransport)
        #expect(stub.requests.isEmpty)
    }

    @Test func withoutACredentialPlainHTTPIsNotAnError() async throws {
        let (stub, result) = try await run(AuthPlugin { nil }, base: "http://api.example.com")
        #expect((try? result.get()) != nil)
        #expect(stub.requests.count == 1)
    }

    @Test func httpsIsAlwaysFine() async throws {
        let (stub, result) = try await run(.auth(.bearer("t")), base: "https://api.example.com")
        #expect((try? result.get()) != nil)
        #expect(stub.requests.first?.value(forHTTPHeaderField: "Authorization") == "Bearer t")
    }

    @Test func aColonInABasicUsernameIsRejected() async throws {
        let (stub, result) = try await run(
            .auth(.basic(username: "a:b", password: "p")),
            base: "https://api.example.com"
        )
        guard case .failure(let error as AuthPlugin.Error) = result else {
            Issue.record("expected an AuthPlugin.Error")
            return
        }
        #expect(error.code == .invalidCredential)
        #expect(stub.requests.isEmpty)
    }

    @Test(arguments: [
        Credential.bearer("a\r\nX-Injected: 1"), .header(name: "X-Key", value: "v\n"),
        .header(name: "Bad Name", value: "v"),
        .basic(username: "u", password: "p\u{0}"), .query(name: "", value: "v"),
    ])
    func credentialsThatCannotBeSentAreRejected(credential: Credential) async throws {
        let (stub, result) = try await run(.auth(credential), base: "https://api.example.com")
        guard case .failure(let error as AuthPlugin.Error) = result else {
            Issue.record("expected an AuthPlugin.Error")
            return
        }
        #expect(error.code == .invalidCredential)
        #expect(stub.requests.isEmpty)
    }

    @Test func credentialsNeverPrintTheirSecret() {
        let credentials: [Credential] = [
            .bearer("s1"), .basic(username: "ann", password: "s2"), .header(name: "X-Key", value: "s3"),
            .query(name: "k", value: "s4"),
        ]
        let printed = credentials.map { "\($0) \(String(reflecting: $0))" }.joined(separator: " ")
        for secret in ["s1", "s2", "s3", "s4"] {
            #expect(!printed.contains(secret))
        }
        #expect(printed.contains("basic(username: ann, password: <redacted>)"))
    }

    @Test func eventsSayWhatHappenedWithoutSecrets() async throws {
        let log = EventRecorder()
        let stub = StubTransport(fallback: .status(200))
        let provider = NetworkAgentProvider<AuthEndpoint>(
            plugins: [.auth(.bearer("s3cret"))],
            agent: NetworkAgent(transport: stub)
        )
        let base = try #require(URL(string: "https://api.example.com"))
        try await log.observing {
            _ = try await provider.request(endpoint: AuthEndpoint(baseURL: base))
            _ = try await provider.request(endpoint: AuthEndpoint(baseURL: base, authorization: .none))
            _ = try await provider.request(endpoint: AuthEndpoint(baseURL: base, headers: ["Authorization": "x"]))
        }
        #expect(
            log.events.map(\.description) == [
                "auth.credential_added scheme=bearer", "auth.credential_withheld reason=opted_out",
                "auth.credential_withheld reason=already_present",
            ]
        )
        #expect(!log.events.description.contains("s3cret"))
    }

    @Test func authorizingReplacesWhatIsInTheSamePlace() throws {
        var request = URLRequest(url: try #require(URL(string: "https://h/p?api_key=old&a=1+2")))
        request.setValue("Bearer old", forHTTPHeaderField: "Authorization")
        let bearer = try Credential.bearer("new").authorizing(request)
        #expect(bearer.value(forHTTPHeaderField: "Authorization") == "Bearer new")
        let query = try Credential.query(name: "api_key", value: "new").authorizing(request)
        #expect(query.url?.absoluteString == "https://h/p?a=1+2&api_key=new")
    }

    /// The shortcut that finds a request URL under its endpoint's own origin without working out the endpoint's
    /// origin says so only where the origins are equal, and is taken for a request to the endpoint's own URLs.
    @Test func sameAuthorityShortcutAgreesWithOrigins() throws {
        let texts = [
            "http://127.0.0.1:8080", "http://127.0.0.1:8080/", "http://127.0.0.1:8080/a?b#c",
            "http://127.0.0.1:80800/a",
            "http://127.0.0.1", "http://127.0.0.1:80/", "HTTP://Example.com/x", "http://example.com/x",
            "https://example.com", "https://example.com.evil.test/", "https://user:pw@example.com/x",
            "https://example.com@evil.test/", "http://[::1]:9000/x", "http://[::1]/x", "urn:x://example.com/a",
            "file:///tmp/x", "mailto:someone", "http://example.com?x=1", "http://example.com#f",
        ]
        let urls = try texts.map { try #require(URL(string: $0)) }
        for base in urls {
            for url in urls where AuthPlugin.startsWithAuthority(of: base, url) {
                #expect(Origin(base) != nil && Origin(base) == Origin(url), "\(base) \(url)")
            }
        }
        let base = try #require(URL(string: "http://127.0.0.1:8080"))
        #expect(AuthPlugin.startsWithAuthority(of: base, try #require(URL(string: "http://127.0.0.1:8080/p/x.json"))))
        #expect(!AuthPlugin.startsWithAuthority(of: base, try #require(URL(string: "http://127.0.0.1:80800/p"))))
    }

    /// A request carries a bearer credential when its `Authorization` is exactly `Bearer <token>` (as `==` compares
    /// strings) and the token could be sent; the refresher asks on every request.
    @Test func bearerIsCarriedByItsExactValue() throws {
        let long = String(repeating: "eyJhbGciOiJIUzI1NiJ9.", count: 40)
        let tokens = [
            "t", "test-token", "ñ-token", "e\u{301}", "\u{e9}", "bad\n", "tab\tok", "del\u{7f}", "nel\u{85}", "", long,
        ]
        let values: [String?] = [
            nil, "Bearer t", "Bearer test-token", "bearer test-token", "Bearer test-tokenx", "Bearer ñ-token",
            "Bearer \u{e9}", "Bearer e\u{301}", "Bearer bad\n", "Bearer tab\tok", "Bearer del\u{7f}",
            "Bearer nel\u{85}", "Bearer ", "Bearer", "Basic dDp0", "Bearer " + long, "Bearer " + long + "x",
        ]
        let url = try #require(URL(string: "https://example.com/x"))
        for token in tokens {
            for value in values {
                var request = URLRequest(url: url)
                request.allHTTPHeaderFields = value.map { ["Authorization": $0] } ?? [:]
                let sendable = !token.unicodeScalars.contains { $0.value < 0x20 && $0 != "\t" || $0.value == 0x7f }
                let expected = sendable && value == "Bearer " + token
                #expect(Credential.bearer(token).isCarried(by: request) == expected, "\(token) \(value ?? "nil")")
            }
        }
    }

    /// A credential with a control character (below U+0020 other than the tab, or U+007F, as its scalars say) is
    /// refused; the check reads the value's bytes.
    @Test func controlCharactersAreFoundOnTheBytes() throws {
        let values = [
            "plain", "tab\tok", "nl\n", "cr\r", "nul\u{0}", "del\u{7f}", "nel\u{85}", "ñ", "e\u{301}", "😀", "",
            "\u{1f}x", String(repeating: "a", count: 1_000) + "\u{7f}",
        ]
        let request = URLRequest(url: try #require(URL(string: "https://example.com/x")))
        for value in values {
            let control = value.unicodeScalars.contains { $0.value < 0x20 && $0 != "\t" || $0.value == 0x7f }
            #expect(
                ((try? Credential.bearer(value).authorizing(request)) == nil) == control,
                "\(value.debugDescription)"
            )
            #expect(
                ((try? Credential.header(name: "X-Key", value: value).authorizing(request)) == nil) == control,
                "\(value.debugDescription)"
            )
        }
    }

    /// What the plugin remembers per endpoint type (which types do not adopt `AuthorizableEndpoint`) gives the
    /// requirement the conformance cast gives, for types seen before and for the first time, a class that does not
    /// adopt it and its subclass that does included.
    @Test func rememberedRequirementsEqualTheCast() throws {
        let url = try #require(URL(string: "https://example.com"))
        let key = Credential.header(name: "X-Key", value: "k")
        let endpoints: [any NetworkAgentEndpoint] = [
            PlainEndpoint(baseURL: url), AuthEndpoint(baseURL: url, authorization: .none),
            AuthEndpoint(baseURL: url, authorization: .credential(key)), PlainClassEndpoint(baseURL: url),
            AuthorizableSubclassEndpoint(baseURL: url), AuthEndpoint(baseURL: url), PlainEndpoint(baseURL: url),
        ]
        for _ in 0..<3 {
            for endpoint in endpoints {
                let cast = (endpoint as? any AuthorizableEndpoint)?.authorization ?? .default
                #expect(AuthPlugin.requirement(of: endpoint) == cast, "\(type(of: endpoint))")
            }
        }
        #expect(AuthPlugin.requirement(of: AuthorizableSubclassEndpoint(baseURL: url)) == .none)
    }

    /// The origin a request gets, remembered per endpoint `baseURL` for a request under that `baseURL`'s scheme and
    /// authority, is the one worked out from the request URL, and the plugin allows the same requests and transports,
    /// for `baseURL`s seen before and for the first time, with and without extra origins and plain-http hosts.
    @Test func rememberedBaseOriginsEqualTheRequestsOwn() throws {
        let texts = [
            "http://127.0.0.1:8080", "http://127.0.0.1:8080/", "http://127.0.0.1:8080/a?b#c",
            "http://127.0.0.1:80800/a", "http://127.0.0.1", "http://127.0.0.1:80/", "HTTP://Example.com/x",
            "http://example.com/x", "https://example.com", "https://example.com.evil.test/",
            "https://user:pw@example.com/x", "https://example.com@evil.test/", "http://[::1]:9000/x", "http://[::1]/x",
            "urn:x://example.com/a",
            "file:///tmp/x", "http://example.com?x=1", "http://LocalHost:9/x", "http://a.localhost/x",
            "http://127.0.0.300/x", "http://127.000.0.1/x", "http://%6Cocalhost/x", "http://plain.test/x",
            "http://PLAIN.test:8080/y", "https://[::1]/z",
        ]
        let urls = try texts.map { try #require(URL(string: $0)) }
        let plugins = [
            AuthPlugin { nil },
            AuthPlugin(
                additionalOrigins: [try #require(URL(string: "https://example.com"))],
                plainHTTPHosts: ["Plain.test"]
            ) { nil },
        ]
        for plugin in plugins {
            for _ in 0..<2 {
                for base in urls {
                    let endpoint = PlainEndpoint(baseURL: base)
                    for url in urls {
                        let expected = Origin(url).flatMap { origin -> (Origin, Bool)? in
                            guard plugin.isAllowed(origin, of: url, endpoint: endpoint) else { return nil }
                            let host = origin.host
                            let travels = origin.isSecure || origin.isLoopback || plugin.plainHTTPHosts.contains(host)
                            return (origin, travels)
                        }
                        let allowed = plugin.allowedOrigin(of: url, endpoint: endpoint)
                        #expect(allowed?.origin == expected?.0, "\(base) \(url)")
                        #expect(allowed?.mayCarryCredential == expected?.1, "\(base) \(url)")
                    }
                }
            }
        }
    }
}

/// An endpoint that does not adopt `AuthorizableEndpoint`.
private struct PlainEndpoint: NetworkAgentEndpoint {
    var baseURL: URL
    var path = "/"
    var method = HTTPMethod.get
    var headers: [String: String] = [:]
    var task = HTTPTask.requestPlain
}

/// A class endpoint that does not adopt `AuthorizableEndpoint`; its subclass does.
private class PlainClassEndpoint: NetworkAgentEndpoint, @unchecked Sendable {
    // @unchecked Sendable: every stored property is a `let` of a Sendable type.
    let baseURL: URL
    let path = "/"
    let method = HTTPMethod.get
    let headers: [String: String] = [:]
    let task = HTTPTask.requestPlain

    init(baseURL: URL) {
        self.baseURL = baseURL
    }
}

/// A subclass of an endpoint class that does not adopt `AuthorizableEndpoint`, adopting it.
private final class AuthorizableSubclassEndpoint: PlainClassEndpoint, AuthorizableEndpoint, @unchecked Sendable {
    // @unchecked Sendable: it adds no stored property to its superclass's `let`s.
    var authorization: AuthorizationRequirement { .none }
}
