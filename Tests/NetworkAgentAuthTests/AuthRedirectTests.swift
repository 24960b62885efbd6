import Foundation
import NetworkAgent
import NetworkAgentAuth
import NetworkAgentTestServer
import NetworkAgentTestSupport
import NetworkAgentTesting
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Credentials the plugin adds stay on their origin when the server redirects, whatever header carries them.
@Suite struct AuthRedirectTests {

    @Test("17.2 a custom-header credential does not follow a redirect to another origin", arguments: [302, 307])
    func customHeaderCredentialStaysOnItsOrigin(status: Int) async throws {
        let (origin, other) = try redirectingOrigins(status: status)
        let provider = NetworkAgentProvider<AuthEndpoint>(
            plugins: [.auth(.header(name: "X-API-Key", value: "k-123"))],
            agent: NetworkAgent(transport: TestTransport.make())
        )

        _ = try await provider.request(endpoint: AuthEndpoint(baseURL: origin.baseURL, path: "/away"))
        #expect(origin.requests.first?.header("X-API-Key") == "k-123")
        let landed = try #require(other.requests.first)
        #expect(landed.path == "/landing")
        #expect(landed.header("X-API-Key") == nil)

        _ = try await provider.request(endpoint: AuthEndpoint(baseURL: origin.baseURL, path: "/near"))
        let sameOrigin = try #require(origin.requests.last)
        #expect(sameOrigin.path == "/landing")
        #expect(sameOrigin.header("X-API-Key") == "k-123")
        #expect(origin.requests.allSatisfy { $0.header(URLRequest.sensitiveHeadersField) == nil })
    }

    @Test("17.2 the plugin marks every credential header it adds as sensitive")
    func credentialHeadersAreMarkedSensitive() throws {
        let request = URLRequest(url: try #require(URL(string: "https://api.example/")))
        let keyed = try Credential.header(name: "X-API-Key", value: "k").authorizing(request)
        #expect(keyed.sensitiveHeaderNames == ["x-api-key"])
        let bearer = try Credential.bearer("t").authorizing(request)
        #expect(bearer.sensitiveHeaderNames == ["authorization"])
    }

    @Test(
        "18.6 the auth guard treats a default port written out as the endpoint's origin",
        arguments: [("http://a", "http://a:80"), ("http://a:80", "http://a"), ("https://a", "https://a:443")]
    )
    func explicitDefaultPortIsTheEndpointsOrigin(base: String, sent: String) async throws {
        let stub = StubTransport(fallback: .status(200))
        let provider = NetworkAgentProvider<AuthEndpoint>(
            plugins: [
                Redirector(target: try #require(URL(string: sent))), .auth(.bearer("t"), plainHTTPHosts: ["a"]),
            ],
            agent: NetworkAgent(transport: stub)
        )
        _ = try await provider.request(endpoint: AuthEndpoint(baseURL: try #require(URL(string: base))))
        let request = try #require(stub.requests.first)
        #expect(request.value(forHTTPHeaderField: "Authorization") == "Bearer t")
    }
}
