import Foundation
import NetworkAgent
import NetworkAgentLogging
import NetworkAgentTestServer
import NetworkAgentTestSupport
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Every redaction rule, over the wire and in every case variant of the names.
@Suite struct RedactionTests {
    let agent = TestTransport.agent(configuration: NetworkAgentConfiguration(userAgent: "test-agent"))

    /// Runs one call with logging at `.body` and returns the collected records.
    func log(
        _ endpoint: TestEndpoint,
        redaction: RedactionPolicy = RedactionPolicy(),
        curl: Bool = false
    ) async throws -> RecordCollector {
        let collector = RecordCollector()
        let plugin = LoggingPlugin(level: .body, redaction: redaction, logsCURLCommands: curl, sink: collector.sink)
        _ = try await NetworkAgentProvider<TestEndpoint>(plugins: [plugin], agent: agent).request(endpoint: endpoint)
        return collector
    }

    @Test func theDefaultsAreTheDocumentedNames() {
        let policy = RedactionPolicy()
        for name in ["Authorization", "Proxy-Authorization", "Cookie", "Set-Cookie", "X-API-Key"] {
            #expect(policy.redactsHeader(name))
        }
        for name in ["token", "access_token", "refresh_token", "id_token", "client_secret", "api_key", "password"] {
            #expect(policy.redactsQueryParameter(name))
            #expect(policy.redactsBodyField(name))
        }
        #expect(!policy.redactsHeader("Accept"))
        #expect(!policy.redactsQueryParameter("q"))
        #expect(RedactionPolicy.placeholder == "<redacted>")
    }

    @Test func headerNamesCompareCaseInsensitively() {
        let policy = RedactionPolicy().redactingHeaders("X-SESSION").revealingHeaders("cOOKIE")
        for name in ["authorization", "AUTHORIZATION", "Proxy-authorization", "x-api-key", "X-Session", "x-session"] {
            #expect(policy.redactsHeader(name), "\(name)")
        }
        #expect(!policy.redactsHeader("Cookie"))
        #expect(!policy.redactsHeader("COOKIE"))
        #expect(policy.redactsHeader("set-cookie"))
    }

    @Test func requestHeadersAreRedactedWhateverCaseTheyWereSetIn() async throws {
        let server = try LoopbackServer { _ in .text("") }
        let headers = [
            "authorization": "Bearer s1", "PROXY-AUTHORIZATION": "Basic s2", "cookie": "id=s3", "x-api-KEY": "s4",
            "Accept": "text/plain",
        ]
        let collector = try await log(TestEndpoint(baseURL: server.baseURL, headers: headers), curl: true)
        // Foundation canonicalises the names it stores (`X-Api-Key`); the values are what matters.
        let lines = try #require(collector.only(.request)).message.components(separatedBy: "\n").map { $0.lowercased() }
        #expect(lines.contains("authorization: <redacted>"))
        #expect(lines.contains("proxy-authorization: <redacted>"))
        #expect(lines.contains("cookie: <redacted>"))
        #expect(lines.contains("x-api-key: <redacted>"))
        #expect(lines.contains("accept: text/plain"))
        for secret in ["s1", "s2", "s3", "s4"] {
            #expect(!collector.allText.contains(secret))
        }
        // The secrets did reach the server: redaction is for the log only.
        #expect(server.requests.first?.header("Authorization") == "Bearer s1")
        #expect(server.requests.first?.header("X-API-Key") == "s4")
    }

    @Test func responseSetCookieIsRedacted() async throws {
        let server = try LoopbackServer { _ in .text("", headers: [("set-cookie", "session=s5; HttpOnly")]) }
        let collector = try await log(TestEndpoint(baseURL: server.baseURL))
        let lines = try #require(collector.only(.response)).message.components(separatedBy: "\n")
        #expect(lines.map { $0.lowercased() }.contains("set-cookie: <redacted>"))
        #expect(!collector.allText.contains("s5"))
    }

    @Test func headersTheUserAddsAreRedacted() async throws {
        let server = try LoopbackServer { _ in .text("", headers: [("x-session", "s7")]) }
        let endpoint = TestEndpoint(baseURL: server.baseURL, headers: ["x-SESSION": "s6"])
        let collector = try await log(endpoint, redaction: RedactionPolicy().redactingHeaders("X-Session"), curl: true)
        let request = try #require(collector.only(.request)).message.lowercased()
        #expect(request.contains("x-session: <redacted>"))
        let response = try #require(collector.only(.response)).message.lowercased()
        #expect(response.contains("x-session: <redacted>"))
        #expect(!collector.allText.contains("s6"))
        #expect(!collector.allText.contains("s7"))
    }

    @Test func revealingIsPerName() async throws {
        let server = try LoopbackServer { _ in .text("") }
        let endpoint = TestEndpoint(baseURL: server.baseURL, headers: ["Cookie": "c=1", "Authorization": "Bearer s8"])
        let collector = try await log(endpoint, redaction: RedactionPolicy().revealingHeaders("COOKIE"), curl: true)
        let request = try #require(collector.only(.request)).message
        #expect(request.contains("Cookie: c=1"))
        #expect(request.contains("Authorization: <redacted>"))
        #expect(!collector.allText.contains("s8"))
    }

    @Test func queryParametersAreRedactedInEveryCase() async throws {
        let server = try LoopbackServer { _ in .text("") }
        let endpoint = TestEndpoint(
            baseURL: server.baseURL,
            path: "/q",
            task: .requestAttributes(
                attributes: ["TOKEN": "s1", "Access_Token": "s2", "api_key": "s3", "password": "s 4", "page": 2],
                encoding: .url
            )
        )
        let collector = try await log(endpoint, curl: true)
        let url = try #require(collector.only(.request)?.metadata["url"])
        #expect(
            url
                == "\(server.baseURL.absoluteString)/q?Access_Token=<redacted>&TOKEN=<redacted>&api_key=<redacted>"
                + "&page=2&password=<redacted>"
        )
        for secret in ["s1", "s2", "s3", "s%204", "s 4"] {
            #expect(!collector.allText.contains(secret))
        }
        #expect(collector.only(.curl)?.message.contains("password=<redacted>") == true)
    }

    @Test func revealingAQueryParameterShowsIt() async throws {
        let server = try LoopbackServer { _ in .text("") }
        let endpoint = TestEndpoint(
            baseURL: server.baseURL,
            task: .requestAttributes(attributes: ["token": "visible", "password": "s9"], encoding: .url)
        )
        let collector = try await log(endpoint, redaction: RedactionPolicy().revealingQueryParameters("Token"))
        let url = try #require(collector.only(.request)?.metadata["url"])
        #expect(url.hasSuffix("?password=<redacted>&token=visible"))
    }

    @Test func urlPasswordsAreRedacted() async throws {
        let server = try LoopbackServer { _ in .text("") }
        let base = try #require(URL(string: "http://alice:s10@127.0.0.1:\(server.port)"))
        let collector = try await log(TestEndpoint(baseURL: base, path: "/u"), curl: true)
        #expect(collector.only(.request)?.metadata["url"] == "http://alice:<redacted>@127.0.0.1:\(server.port)/u")
        #expect(!collector.allText.contains("s10"))
    }

    @Test func jsonFieldsAreRedactedAtAnyDepthInEveryCase() async throws {
        let server = try LoopbackServer { _ in
            .json(Data(#"{"Access_Token":"s3","user":{"name":"ann","PASSWORD":"s4"},"list":[{"token":"s5"}]}"#.utf8))
        }
        let endpoint = TestEndpoint(
            baseURL: server.baseURL,
            method: .post,
            headers: ["Content-Type": "application/json"],
            task: .requestAttributes(
                attributes: ["login": "ann", "Password": "s1", "nested": [["client_secret": "s2"]]],
                encoding: .json
            )
        )
        let collector = try await log(endpoint, curl: true)
        let request = try #require(collector.only(.request).flatMap { Self.jsonBody(of: $0.message) })
        #expect(
            request
                == ["Password": "<redacted>", "login": "ann", "nested": [["client_secret": "<redacted>"]]]
                as NSDictionary
        )
        let response = try #require(collector.only(.response).flatMap { Self.jsonBody(of: $0.message) })
        #expect(
            response
                == [
                    "Access_Token": "<redacted>", "list": [["token": "<redacted>"]],
                    "user": ["PASSWORD": "<redacted>", "name": "ann"],
                ] as NSDictionary
        )
        for secret in ["s1", "s2", "s3", "s4", "s5"] {
            #expect(!collector.allText.contains("\"\(secret)\""))
        }
        #expect(server.requests.first?.bodyText.contains("s1") == true)
    }

    @Test func jsonFieldsTheUserAddsOrRevealsFollowThePolicy() async throws {
        let server = try LoopbackServer { _ in .json(Data(#"{"ssn":"s1","password":"shown"}"#.utf8)) }
        let policy = RedactionPolicy().redactingBodyFields("SSN").revealingBodyFields("password")
        let collector = try await log(TestEndpoint(baseURL: server.baseURL), redaction: policy)
        let response = try #require(collector.only(.response).flatMap { Self.jsonBody(of: $0.message) })
        #expect(response == ["password": "shown", "ssn": "<redacted>"] as NSDictionary)
    }

    @Test func jsonWithoutSecretsIsPrintedAsSent() async throws {
        let body = #"{ "z": 1,  "a": [true] }"#
        let server = try LoopbackServer { _ in .json(Data(body.utf8)) }
        let collector = try await log(TestEndpoint(baseURL: server.baseURL))
        #expect(collector.only(.response)?.message.contains("\n" + body + "\n") == true)
    }

    @Test func formBodiesAreRedactedLikeQueries() async throws {
        let server = try LoopbackServer { _ in .text("") }
        let endpoint = TestEndpoint(
            baseURL: server.baseURL,
            method: .post,
            headers: [:],
            task: .requestAttributes(attributes: ["username": "ann", "Password": "s1"], encoding: .form)
        )
        let collector = try await log(endpoint, curl: true)
        #expect(collector.only(.request)?.message.contains("\nPassword=<redacted>&username=ann\n") == true)
        #expect(collector.only(.curl)?.message.contains("--data-raw 'Password=<redacted>&username=ann'") == true)
        #expect(!collector.allText.contains("s1"))
    }

    /// The JSON object on the body line of a logged block (the line after the blank one).
    static func jsonBody(of message: String) -> NSDictionary? {
        let lines = message.components(separatedBy: "\n")
        guard let blank = lines.firstIndex(of: ""), blank + 1 < lines.count else { return nil }
        let data = Data(lines[blank + 1].utf8)
        return (try? JSONSerialization.jsonObject(with: data)) as? NSDictionary
    }
}
