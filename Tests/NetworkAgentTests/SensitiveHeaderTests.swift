import Foundation
import NetworkAgentTestServer
import NetworkAgentTestSupport
import Testing

@testable import NetworkAgent

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Which headers a redirect strips, which origins are the same, and which authentication challenges are cancelled.
@Suite struct SensitiveHeaderTests {
    let transport = TestTransport.make()

    func url(_ text: String) throws -> URL {
        try #require(URL(string: text))
    }

    /// A redirect response to `location` for `request`.
    func redirect(_ status: Int, from request: URLRequest, to location: String) throws -> HTTPURLResponse {
        let response = HTTPURLResponse(
            url: try #require(request.url),
            statusCode: status,
            httpVersion: "HTTP/1.1",
            headerFields: ["Location": location]
        )
        return try #require(response)
    }

    func endpoint(_ server: LoopbackServer, _ path: String, headers: [String: String]) -> TestEndpoint {
        TestEndpoint(baseURL: server.baseURL, path: path, headers: headers, timeout: .seconds(10))
    }

    @Test("17.2 headers the configuration declares sensitive stay on their origin", arguments: [302, 307])
    func configuredSensitiveHeadersStayOnTheirOrigin(status: Int) async throws {
        let (origin, other) = try redirectingOrigins(status: status)
        var configuration = NetworkAgentConfiguration()
        configuration.sensitiveHeaders = ["x-session"]
        let agent = NetworkAgent(transport: transport, configuration: configuration)
        let headers = ["X-Session": "s3cret", "X-Trace": "t1"]

        _ = try await agent.request(endpoint(origin, "/away", headers: headers))
        let landed = try #require(other.requests.first)
        #expect(landed.header("X-Session") == nil)
        #expect(landed.header("X-Trace") == "t1")
        #expect(landed.header(URLRequest.sensitiveHeadersField) == nil)

        _ = try await agent.request(endpoint(origin, "/near", headers: headers))
        let sameOrigin = try #require(origin.requests.last)
        #expect(sameOrigin.path == "/landing")
        #expect(sameOrigin.header("X-Session") == "s3cret")
        #expect(origin.requests.allSatisfy { $0.header(URLRequest.sensitiveHeadersField) == nil })
    }

    @Test("17.2 a header marked sensitive on the request stays on its origin", arguments: [302, 307])
    func markedSensitiveHeadersStayOnTheirOrigin(status: Int) async throws {
        let (origin, other) = try redirectingOrigins(status: status)
        var request = URLRequest(url: origin.baseURL.appendingPathComponent("away"))
        request.setValue("k1", forHTTPHeaderField: "X-Custom-Key")
        request.sensitiveHeaderNames.insert("X-Custom-Key")
        #expect(request.sensitiveHeaderNames == ["x-custom-key"])

        _ = try await transport.send(request)
        let landed = try #require(other.requests.first)
        #expect(landed.header("X-Custom-Key") == nil)
        #expect(landed.header(URLRequest.sensitiveHeadersField) == nil)
        #expect(origin.requests.first?.header("X-Custom-Key") == "k1")
        #expect(origin.requests.first?.header(URLRequest.sensitiveHeadersField) == nil)
    }

    @Test("17.2 an https to http downgrade on the same host drops sensitive headers")
    func downgradeDropsSensitiveHeaders() throws {
        var request = URLRequest(url: try url("https://api.example/a"))
        request.setValue("Bearer t", forHTTPHeaderField: "Authorization")
        request.setValue("k1", forHTTPHeaderField: "X-API-Key")
        request.sensitiveHeaderNames = ["X-API-Key"]
        let response = try redirect(302, from: request, to: "http://api.example/b")
        let next = try #require(try RedirectPolicy.nextRequest(after: request, response: response))
        #expect(next.url?.absoluteString == "http://api.example/b")
        #expect(next.value(forHTTPHeaderField: "Authorization") == nil)
        #expect(next.value(forHTTPHeaderField: "X-API-Key") == nil)
    }

    @Test(
        "18.6 the redirect policy treats a default port written out as the same origin",
        arguments: [
            ("http://a/x", "http://a:80/y"), ("https://a/x", "https://a:443/y"), ("http://A:80/x", "http://a/y"),
        ]
    )
    func explicitDefaultPortIsTheSameOrigin(from: String, to: String) throws {
        var request = URLRequest(url: try url(from))
        request.setValue("Bearer t", forHTTPHeaderField: "Authorization")
        let response = try redirect(307, from: request, to: to)
        let next = try #require(try RedirectPolicy.nextRequest(after: request, response: response))
        #expect(next.value(forHTTPHeaderField: "Authorization") == "Bearer t")
        #expect(Origin(try url(from)) == Origin(try url(to)))
    }

    @Test("18.6 other ports, schemes and hosts are other origins")
    func otherOrigins() throws {
        let base = Origin(try url("http://a/"))
        #expect(base != nil)
        for other in ["http://a:8080/", "https://a/", "http://b/", "https://a:80/"] {
            #expect(Origin(try url(other)) != base, "\(other)")
        }
        #expect(Origin(try url("/relative")) == nil)
    }

    /// Sends one challenge through the session delegate and returns what it answered.
    func answer(to method: String) async throws -> URLSession.AuthChallengeDisposition {
        let delegate = SessionDelegate()
        let session = URLSession(configuration: .ephemeral)
        defer { session.invalidateAndCancel() }
        let task = session.dataTask(with: try url("https://127.0.0.1:1/"))
        let space = URLProtectionSpace(
            host: "127.0.0.1",
            port: 1,
            protocol: "https",
            realm: nil,
            authenticationMethod: method
        )
        let challenge = URLAuthenticationChallenge(
            protectionSpace: space,
            proposedCredential: nil,
            previousFailureCount: 0,
            failureResponse: nil,
            error: nil,
            sender: IgnoringSender()
        )
        let answered = Locked<URLSession.AuthChallengeDisposition?>(nil)
        delegate.urlSession(session, task: task, didReceive: challenge) { disposition, _ in
            answered.withLock { $0 = disposition }
        }
        return try #require(answered.withLock { $0 })
    }

    @Test("17.15 server trust and client certificates get the default handling; HTTP auth is cancelled")
    func onlyHTTPAuthenticationIsCancelled() async throws {
        #expect(try await answer(to: "NSURLAuthenticationMethodServerTrust") == .performDefaultHandling)
        #expect(try await answer(to: "NSURLAuthenticationMethodClientCertificate") == .performDefaultHandling)
        for method in [
            NSURLAuthenticationMethodHTTPBasic, NSURLAuthenticationMethodHTTPDigest, NSURLAuthenticationMethodNTLM,
            NSURLAuthenticationMethodNegotiate, NSURLAuthenticationMethodDefault, NSURLAuthenticationMethodHTMLForm,
            "SomeFutureMethod",
        ] {
            #expect(try await answer(to: method) == .cancelAuthenticationChallenge, "\(method)")
        }
    }

    @Test("17.15 the challenge decision as a pure function")
    func challengeDecision() {
        #expect(
            SessionDelegate.disposition(forAuthenticationMethod: "NSURLAuthenticationMethodServerTrust")
                == .performDefaultHandling
        )
        #expect(
            SessionDelegate.disposition(forAuthenticationMethod: NSURLAuthenticationMethodHTTPBasic)
                == .cancelAuthenticationChallenge
        )
        #expect(
            SessionDelegate.disposition(forAuthenticationMethod: NSURLAuthenticationMethodNegotiate)
                == .cancelAuthenticationChallenge
        )
    }
}

/// A challenge sender that does nothing: the delegate answers through its completion handler.
private final class IgnoringSender: NSObject, URLAuthenticationChallengeSender {
    func use(_ credential: URLCredential, for challenge: URLAuthenticationChallenge) {}
    func continueWithoutCredential(for challenge: URLAuthenticationChallenge) {}
    func cancel(_ challenge: URLAuthenticationChallenge) {}
    func performDefaultHandling(for challenge: URLAuthenticationChallenge) {}
    func rejectProtectionSpaceAndContinue(with challenge: URLAuthenticationChallenge) {}
}
