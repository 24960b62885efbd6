import Foundation
import NetworkAgent
import NetworkAgentLogging
import NetworkAgentTestServer
import NetworkAgentTestSupport
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Secrets that used to reach the log: URLs of redirect hops and error messages, and bodies no redactor could parse.
@Suite struct SecretLeakTests {
    func log(
        _ endpoint: TestEndpoint,
        level: LogLevel = .body,
        transport: any HTTPTransport = TestTransport.shared,
        plugins: [any NetworkAgentPlugin] = []
    ) async -> (collector: RecordCollector, error: (any Error)?) {
        let collector = RecordCollector()
        let plugin = LoggingPlugin(level: level, logsCURLCommands: true, sink: collector.sink)
        let provider = NetworkAgentProvider<TestEndpoint>(
            plugins: [plugin] + plugins,
            agent: NetworkAgent(transport: transport)
        )
        do {
            _ = try await provider.request(endpoint: endpoint)
            return (collector, nil)
        } catch {
            return (collector, error)
        }
    }

    // MARK: 17.3

    @Test("17.3 a failing redirect hop is logged with its URL redacted")
    func failingHopURLIsRedacted() async throws {
        let server = try LoopbackServer { request in
            if request.path == "/start" {
                return ServerResponse(status: 302, headers: [("Location", "/next?access_token=hopsecret1&page=2")])
            }
            return ServerResponse(fault: .resetBeforeResponse)
        }
        let (collector, error) = await log(TestEndpoint(baseURL: server.baseURL, path: "/start"), level: .headers)
        #expect(error != nil)
        let failure = try #require(collector.only(.failure))
        #expect(failure.message.contains("access_token=<redacted>&page=2"), "\(failure.message)")
        #expect(!collector.allText.contains("hopsecret1"))
    }

    @Test("17.3 Location headers are logged with their secrets redacted")
    func locationHeadersAreRedacted() async throws {
        let server = try LoopbackServer { _ in
            ServerResponse(
                status: 302,
                headers: [
                    ("Location", "/next?access_token=locsecret1&page=2"),
                    ("Content-Location", "https://user:locsecret2@example.com/cb?code=locsecret3"),
                ]
            )
        }
        let (collector, error) = await log(
            TestEndpoint(baseURL: server.baseURL, path: "/start"),
            level: .headers,
            transport: TestTransport.make(maximumRedirects: 0)
        )
        #expect(error == nil)
        let response = try #require(collector.only(.response)).message
        #expect(response.contains("Location: /next?access_token=<redacted>&page=2"), "\(response)")
        for secret in ["locsecret1", "locsecret2", "locsecret3"] {
            #expect(!collector.allText.contains(secret), "\(secret)")
        }
    }

    @Test("17.3 URLs in error descriptions and event attributes are redacted")
    func urlsInErrorsAndEventsAreRedacted() async throws {
        struct Failing: NetworkAgentPlugin {
            func intercept(
                _ request: URLRequest,
                endpoint: any NetworkAgentEndpoint,
                next: NetworkAgentExchange
            ) async throws -> (data: Data, response: URLResponse) {
                NetworkAgentEvents.emit(
                    NetworkAgentEvent(
                        source: "mirror",
                        name: "moved",
                        attributes: ["target": "https://mirror.example/x?api_key=evsecret1"]
                    )
                )
                throw NetworkAgentError(
                    .transport,
                    "https://cdn.example/file?token=errsecret1&x=1: connection reset; "
                        + "see http://bob:errsecret2@proxy.example/"
                )
            }
        }
        let (collector, error) = await log(
            TestEndpoint(baseURL: try #require(URL(string: "http://127.0.0.1:1"))),
            plugins: [Failing()]
        )
        #expect(error != nil)
        let failure = try #require(collector.only(.failure)).message
        #expect(failure.contains("https://cdn.example/file?token=<redacted>&x=1"), "\(failure)")
        #expect(failure.contains("http://bob:<redacted>@proxy.example/"), "\(failure)")
        for secret in ["evsecret1", "errsecret1", "errsecret2"] {
            #expect(!collector.allText.contains(secret), "\(secret)")
        }
    }

    // MARK: 17.4

    @Test(
        "17.4 a body its redactor cannot parse is logged as type and size only",
        arguments: [
            ("application/json", #"{"token":"bodysecret1","a":"#),
            ("application/json", #"{"token":"bodysecret1"} trailing"#),
            ("application/x-ndjson", "{\"a\":1}\n{\"token\":\"bodysecret1\""),
            ("application/x-custom", "password bodysecret1"),
            ("application/xml", "<password>bodysecret1</password>"),
        ]
    )
    func unparsableBodiesFailClosed(contentType: String, body: String) async throws {
        let server = try LoopbackServer { _ in
            ServerResponse(headers: [("Content-Type", contentType)], body: .data(Data(body.utf8)))
        }
        let (collector, _) = await log(TestEndpoint(baseURL: server.baseURL))
        let response = try #require(collector.only(.response)).message
        #expect(response.contains("(\(contentType) body, \(body.utf8.count) bytes, not shown"), "\(response)")
        #expect(!collector.allText.contains("bodysecret1"))
    }

    @Test("17.4 a body without Content-Type that is not JSON is logged as size only")
    func untypedTextFailsClosed() async throws {
        let server = try LoopbackServer { _ in ServerResponse(body: .data(Data("token=untyped1 hello".utf8))) }
        let (collector, _) = await log(TestEndpoint(baseURL: server.baseURL))
        let response = try #require(collector.only(.response)).message
        #expect(response.contains("(body of unknown type, 20 bytes, not shown"), "\(response)")
        #expect(!collector.allText.contains("untyped1"))
    }

    @Test("17.4 a truncated JSON request body is neither logged nor inlined in the cURL command")
    func truncatedJSONRequestBodyFailsClosed() async throws {
        let server = try LoopbackServer { _ in .text("") }
        let endpoint = TestEndpoint(
            baseURL: server.baseURL,
            method: .post,
            headers: ["Content-Type": "application/json"],
            task: .requestWithoutAttributes(content: Data(#"{"password":"reqsecret1","#.utf8))
        )
        let (collector, _) = await log(endpoint)
        #expect(collector.only(.curl)?.message.contains("--data-binary '@body.bin'") == true)
        #expect(!collector.allText.contains("reqsecret1"))
    }

    @Test("17.4 NDJSON is redacted line by line")
    func ndjsonIsRedactedLineByLine() async throws {
        let body = "{\"token\":\"ndsecret1\",\"n\":1}\n{\"n\":2}\n"
        let server = try LoopbackServer { _ in
            ServerResponse(headers: [("Content-Type", "application/x-ndjson")], body: .data(Data(body.utf8)))
        }
        let (collector, _) = await log(TestEndpoint(baseURL: server.baseURL))
        let response = try #require(collector.only(.response)).message
        #expect(response.contains("\n{\"n\":1,\"token\":\"<redacted>\"}\n{\"n\":2}\n"), "\(response)")
        #expect(!collector.allText.contains("ndsecret1"))
    }

    @Test("17.4 form bodies hide the OAuth fields")
    func formBodiesHideOAuthFields() async throws {
        let server = try LoopbackServer { _ in .text("") }
        let endpoint = TestEndpoint(
            baseURL: server.baseURL,
            method: .post,
            headers: [:],
            task: .requestAttributes(
                attributes: [
                    "grant_type": "authorization_code", "code": "formsecret1", "code_verifier": "formsecret2",
                    "client_assertion": "formsecret3",
                ],
                encoding: .form
            )
        )
        let (collector, _) = await log(endpoint)
        let request = try #require(collector.only(.request)).message
        #expect(request.contains("grant_type=authorization_code"))
        for secret in ["formsecret1", "formsecret2", "formsecret3"] {
            #expect(!collector.allText.contains(secret), "\(secret)")
        }
    }

    @Test("17.4 plain text is printed with secret parameters and URL passwords hidden")
    func plainTextIsRedacted() async throws {
        let server = try LoopbackServer { _ in
            .text("moved to https://x.example/cb?access_token=txtsecret1&n=1\npassword=txtsecret2")
        }
        let (collector, _) = await log(TestEndpoint(baseURL: server.baseURL))
        let response = try #require(collector.only(.response)).message
        #expect(response.contains("https://x.example/cb?access_token=<redacted>&n=1\npassword=<redacted>"))
        #expect(!collector.allText.contains("txtsecret"))
    }

    @Test("17.4 the default lists hold the headers and fields the issue names")
    func defaultListsAreExtended() {
        let policy = RedactionPolicy()
        for name in ["X-Auth-Token", "X-Access-Token", "X-CSRF-Token", "X-Amz-Security-Token", "X-Goog-Api-Key"] {
            #expect(policy.redactsHeader(name), "\(name)")
        }
        for name in ["code", "code_verifier", "client_assertion", "id_token", "client_secret", "password", "token"] {
            #expect(policy.redactsBodyField(name), "\(name)")
        }
    }

    @Test("17.2 headers a request marks sensitive are redacted in logs and cURL commands")
    func markedHeadersAreRedacted() async throws {
        let server = try LoopbackServer { _ in .text("") }
        var configuration = NetworkAgentConfiguration()
        configuration.sensitiveHeaders = ["X-Session"]
        let collector = RecordCollector()
        let provider = NetworkAgentProvider<TestEndpoint>(
            plugins: [LoggingPlugin(level: .headers, logsCURLCommands: true, sink: collector.sink)],
            agent: TestTransport.agent(configuration: configuration)
        )
        _ = try await provider.request(
            endpoint: TestEndpoint(baseURL: server.baseURL, headers: ["X-Session": "marksecret1"])
        )
        #expect(collector.only(.request)?.message.contains("X-Session: <redacted>") == true)
        #expect(!collector.allText.contains("marksecret1"))
        #expect(!collector.allText.lowercased().contains(URLRequest.sensitiveHeadersField.lowercased()))
    }
}
