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

/// Credentials over the wire: what the server receives, per endpoint, per origin.
@Suite struct AuthPluginTests {
    @Test func bearerArrivesAsTheServerExpects() async throws {
        let server = try LoopbackServer { request in .text(request.header("Authorization") ?? "none") }
        let provider = NetworkAgentProvider<AuthEndpoint>(
            plugins: [.auth(.bearer("abc.def-ghi"))],
            agent: TestTransport.agent()
        )
        let (data, _) = try await provider.request(endpoint: AuthEndpoint(baseURL: server.baseURL))
        #expect(String(decoding: data, as: UTF8.self) == "Bearer abc.def-ghi")
    }

    @Test func basicIsDecodedByTheServer() async throws {
        let server = try LoopbackServer { request in
            guard let header = request.header("Authorization"), header.hasPrefix("Basic "),
                let decoded = Data(base64Encoded: String(header.dropFirst("Basic ".count)))
            else { return .text("bad", status: 401) }
            return .text(String(decoding: decoded, as: UTF8.self))
        }
        let credential = Credential.basic(username: "Ann Lee", password: "pä:ss wörd")
        let provider = NetworkAgentProvider<AuthEndpoint>(plugins: [.auth(credential)], agent: TestTransport.agent())
        let (data, response) = try await provider.request(endpoint: AuthEndpoint(baseURL: server.baseURL))
        #expect((response as? HTTPURLResponse)?.statusCode == 200)
        #expect(String(decoding: data, as: UTF8.self) == "Ann Lee:pä:ss wörd")
    }

    @Test func aCustomHeaderArrives() async throws {
        let server = try LoopbackServer { request in .text(request.header("X-API-Key") ?? "none") }
        let provider = NetworkAgentProvider<AuthEndpoint>(
            plugins: [
                .auth(.header(name: "X-API-Key", value: "k-123"))
            ],
            agent: TestTransport.agent()
        )
        let (data, _) = try await provider.request(endpoint: AuthEndpoint(baseURL: server.baseURL))
        #expect(String(decoding: data, as: UTF8.self) == "k-123")
    }

    @Test func aQueryParameterArrivesEncodedBesideTheEndpointsOwn() async throws {
        let server = try LoopbackServer { _ in .text("") }
        let provider = NetworkAgentProvider<AuthEndpoint>(
            plugins: [
                .auth(.query(name: "api_key", value: "a&b=c d+é"))
            ],
            agent: TestTransport.agent()
        )
        let endpoint = AuthEndpoint(
            baseURL: server.baseURL,
            path: "/items",
            task: .requestAttributes(attributes: ["q": "x+y"], encoding: .url)
        )
        _ = try await provider.request(endpoint: endpoint)
        let received = try #require(server.requests.first)
        #expect(received.target == "/items?q=x%2By&api_key=a%26b%3Dc%20d%2B%C3%A9")
        #expect(received.queryItems.first { $0.name == "api_key" }?.value == "a&b=c d+é")
    }

    @Test func theAsyncProviderIsAskedPerRequestAndNilSendsNothing() async throws {
        let server = try LoopbackServer { request in .text(request.header("Authorization") ?? "none") }
        let counting = CountingProvider(nil)
        let provider = NetworkAgentProvider<AuthEndpoint>(
            plugins: [.auth(counting.provide)],
            agent: TestTransport.agent()
        )
        for _ in 0..<3 {
            let (data, _) = try await provider.request(endpoint: AuthEndpoint(baseURL: server.baseURL))
            #expect(String(decoding: data, as: UTF8.self) == "none")
        }
        #expect(counting.count == 3)
    }

    @Test func providerErrorsPassThroughAndNothingIsSent() async throws {
        struct Locked: Error {}
        let server = try LoopbackServer { _ in .text("") }
        let provider = NetworkAgentProvider<AuthEndpoint>(
            plugins: [.auth { throw Locked() }],
            agent: TestTransport.agent()
        )
        await #expect(throws: Locked.self) {
            try await provider.request(endpoint: AuthEndpoint(baseURL: server.baseURL))
        }
        #expect(server.requestCount == 0)
    }

    @Test func anEndpointCanOptOut() async throws {
        let server = try LoopbackServer { request in .text(request.header("Authorization") ?? "none") }
        let counting = CountingProvider(.bearer("t"))
        let provider = NetworkAgentProvider<AuthEndpoint>(
            plugins: [.auth(counting.provide)],
            agent: TestTransport.agent()
        )
        let login = AuthEndpoint(baseURL: server.baseURL, path: "/login", authorization: .none)
        let (data, _) = try await provider.request(endpoint: login)
        #expect(String(decoding: data, as: UTF8.self) == "none")
        #expect(counting.count == 0)
        let (other, _) = try await provider.request(endpoint: AuthEndpoint(baseURL: server.baseURL))
        #expect(String(decoding: other, as: UTF8.self) == "Bearer t")
    }

    @Test func anEndpointCanPickAnotherCredential() async throws {
        let server = try LoopbackServer { request in
            .text("\(request.header("Authorization") ?? "-") \(request.header("X-Legacy-Key") ?? "-")")
        }
        let counting = CountingProvider(.bearer("t"))
        let provider = NetworkAgentProvider<AuthEndpoint>(
            plugins: [.auth(counting.provide)],
            agent: TestTransport.agent()
        )
        let legacy = AuthEndpoint(
            baseURL: server.baseURL,
            authorization: .credential(.header(name: "X-Legacy-Key", value: "old"))
        )
        let (data, _) = try await provider.request(endpoint: legacy)
        #expect(String(decoding: data, as: UTF8.self) == "- old")
        #expect(counting.count == 0)
    }

    @Test func endpointsThatDoNotAdoptTheProtocolGetTheDefault() async throws {
        let server = try LoopbackServer { request in .text(request.header("Authorization") ?? "none") }
        let provider = NetworkAgentProvider<PlainEndpoint>(plugins: [.auth(.bearer("t"))], agent: TestTransport.agent())
        let (data, _) = try await provider.request(endpoint: PlainEndpoint(baseURL: server.baseURL))
        #expect(String(decoding: data, as: UTF8.self) == "Bearer t")
    }

    @Test func anExistingAuthorizationHeaderWins() async throws {
        let server = try LoopbackServer { request in
            .text("\(request.headerValues("Authorization")) \(request.header("X-API-Key") ?? "-")")
        }
        let counting = CountingProvider(.header(name: "X-API-Key", value: "k"))
        let provider = NetworkAgentProvider<AuthEndpoint>(
            plugins: [.auth(counting.provide)],
            agent: TestTransport.agent()
        )
        let endpoint = AuthEndpoint(baseURL: server.baseURL, headers: ["Authorization": "Token mine"])
        let (data, _) = try await provider.request(endpoint: endpoint)
        #expect(String(decoding: data, as: UTF8.self) == #"["Token mine"] -"#)
        #expect(counting.count == 0)
    }

    @Test func anExistingHeaderOfTheCredentialsNameWins() async throws {
        let server = try LoopbackServer { request in .text("\(request.headerValues("X-API-Key"))") }
        let provider = NetworkAgentProvider<AuthEndpoint>(
            plugins: [
                .auth(.header(name: "X-API-Key", value: "plugin"))
            ],
            agent: TestTransport.agent()
        )
        let endpoint = AuthEndpoint(baseURL: server.baseURL, headers: ["x-api-key": "endpoint"])
        let (data, _) = try await provider.request(endpoint: endpoint)
        #expect(String(decoding: data, as: UTF8.self) == #"["endpoint"]"#)
    }

    @Test func anotherOriginNeverReceivesTheCredential() async throws {
        let other = try LoopbackServer { request in .text(request.header("Authorization") ?? "none") }
        let home = try LoopbackServer { _ in .text("home") }
        let provider = NetworkAgentProvider<AuthEndpoint>(
            plugins: [
                Redirector(target: other.baseURL), .auth(.bearer("t")),
            ],
            agent: TestTransport.agent()
        )
        let (data, _) = try await provider.request(endpoint: AuthEndpoint(baseURL: home.baseURL))
        #expect(String(decoding: data, as: UTF8.self) == "none")
        #expect(other.requestCount == 1)
        #expect(home.requestCount == 0)
        #expect(other.requests.allSatisfy { $0.header("Authorization") == nil })
    }

    @Test func anAllowedOriginReceivesTheCredential() async throws {
        let other = try LoopbackServer { request in .text(request.header("Authorization") ?? "none") }
        let home = try LoopbackServer { _ in .text("home") }
        let provider = NetworkAgentProvider<AuthEndpoint>(
            plugins: [
                Redirector(target: other.baseURL), .auth(.bearer("t"), additionalOrigins: [other.baseURL]),
            ],
            agent: TestTransport.agent()
        )
        let (data, _) = try await provider.request(endpoint: AuthEndpoint(baseURL: home.baseURL))
        #expect(String(decoding: data, as: UTF8.self) == "Bearer t")
    }

    @Test func aRedirectToAnotherOriginDropsTheCredential() async throws {
        let other = try LoopbackServer { request in .text(request.header("Authorization") ?? "none") }
        let home = try LoopbackServer { request in
            request.path == "/go"
                ? ServerResponse(status: 302, headers: [("Location", other.baseURL.absoluteString + "/landed")])
                : .text("home")
        }
        let provider = NetworkAgentProvider<AuthEndpoint>(plugins: [.auth(.bearer("t"))], agent: TestTransport.agent())
        let (data, _) = try await provider.request(endpoint: AuthEndpoint(baseURL: home.baseURL, path: "/go"))
        #expect(String(decoding: data, as: UTF8.self) == "none")
        #expect(home.requests.first?.header("Authorization") == "Bearer t")
        #expect(other.requests.map(\.path) == ["/landed"])
    }

    @Test func theSameHostOnAnotherPortIsAnotherOrigin() async throws {
        let home = try LoopbackServer { _ in .text("") }
        let other = try LoopbackServer { request in .text(request.header("Authorization") ?? "none") }
        let sameHostOtherPort = try #require(URL(string: "http://127.0.0.1:\(other.port)"))
        let provider = NetworkAgentProvider<AuthEndpoint>(
            plugins: [
                Redirector(target: sameHostOtherPort), .auth(.bearer("t")),
            ],
            agent: TestTransport.agent()
        )
        let (data, _) = try await provider.request(endpoint: AuthEndpoint(baseURL: home.baseURL))
        #expect(String(decoding: data, as: UTF8.self) == "none")
    }

    @Test func aDowngradeFromHTTPSToHTTPIsAnotherOrigin() async throws {
        let stub = StubTransport(fallback: .status(200))
        let provider = NetworkAgentProvider<AuthEndpoint>(
            plugins: [Redirector(target: try #require(URL(string: "http://api.example.com"))), .auth(.bearer("t"))],
            agent: NetworkAgent(transport: stub)
        )
        _ = try await provider.request(
            endpoint: AuthEndpoint(baseURL: try #require(URL(string: "https://api.example.com")))
        )
        #expect(stub.requests.first?.url?.scheme == "http")
        #expect(stub.requests.first?.value(forHTTPHeaderField: "Authorization") == nil)
    }
}
