import Foundation
import NetworkAgent
import NetworkAgentAuth
import NetworkAgentTokenRefresh
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Expiry parsing and triggers: pure logic, no network.
@Suite struct TokenLogicTests {
    @Test func jwtExpiryIsReadFromTheExpClaim() throws {
        #expect(AuthToken.expiry(ofJWT: makeJWT(exp: 1_700_000_000)) == Date(timeIntervalSince1970: 1_700_000_000))
        #expect(AuthToken.expiry(ofJWT: makeJWT(exp: 1_700_000_000.5)) == Date(timeIntervalSince1970: 1_700_000_000.5))
        // Payload lengths that need one and two padding characters.
        for subject in ["a", "ab", "abc"] {
            let payload = Data(#"{"exp":12,"s":"\#(subject)"}"#.utf8).base64EncodedString()
                .replacingOccurrences(of: "=", with: "")
            #expect(AuthToken.expiry(ofJWT: "e30.\(payload).x") == Date(timeIntervalSince1970: 12))
        }
    }

    @Test(arguments: ["", "abc", "a.b", "a.b.c.d", "e30.!!!.x", "e30.e30.x", makeJWT(exp: "soon")])
    func notAJWTWithANumericExpHasNoExpiry(text: String) {
        #expect(AuthToken.expiry(ofJWT: text) == nil)
    }

    @Test func bearerJWTTokensCarryTheirExpiry() {
        let jwt = makeJWT(exp: 2_000_000_000)
        let token = AuthToken.bearer(jwt: jwt, refreshToken: "r")
        #expect(token.credential == .bearer(jwt))
        #expect(token.expiresAt == Date(timeIntervalSince1970: 2_000_000_000))
        #expect(token.refreshToken == "r")
    }

    @Test func expiresInCountsFromTheIssueTime() {
        let issued = Date(timeIntervalSince1970: 1_000)
        let token = AuthToken(credential: .bearer("t"), expiresIn: .milliseconds(3_600_500), issuedAt: issued)
        #expect(token.expiresAt == Date(timeIntervalSince1970: 4_600.5))
    }

    @Test func tokensNeverPrintTheirSecrets() {
        let token = AuthToken(credential: .bearer("s1"), refreshToken: "s2")
        #expect(!"\(token)".contains("s1"))
        #expect(!"\(token)".contains("s2"))
    }

    func response(_ status: Int, _ headers: [String: String] = [:]) throws -> HTTPURLResponse {
        let url = try #require(URL(string: "https://h/"))
        let response = HTTPURLResponse(url: url, statusCode: status, httpVersion: "HTTP/1.1", headerFields: headers)
        return try #require(response)
    }

    @Test func triggers() throws {
        let invalid = try response(401, ["WWW-Authenticate": #"Bearer realm="api", error="invalid_token""#])
        let missing = try response(401, ["WWW-Authenticate": #"Bearer realm="api""#])
        let forbidden = try response(403)
        #expect(RefreshTrigger.unauthorized.matches(invalid, data: Data()))
        #expect(RefreshTrigger.unauthorized.matches(missing, data: Data()))
        #expect(!RefreshTrigger.unauthorized.matches(forbidden, data: Data()))
        #expect(RefreshTrigger.invalidTokenChallenge.matches(invalid, data: Data()))
        #expect(!RefreshTrigger.invalidTokenChallenge.matches(missing, data: Data()))
        #expect(RefreshTrigger.status([401, 403]).matches(forbidden, data: Data()))
        let byBody = RefreshTrigger { response, data in
            response.statusCode == 403 && String(decoding: data, as: UTF8.self).contains("token_expired")
        }
        #expect(byBody.matches(forbidden, data: Data(#"{"code":"token_expired"}"#.utf8)))
        #expect(!byBody.matches(forbidden, data: Data(#"{"code":"no_access"}"#.utf8)))
    }

    @Test("17.7 checkTokenResponse tells a rejected refresh token from a failure worth retrying")
    func tokenEndpointAnswersAreClassified() throws {
        func outcome(_ status: Int, _ body: String) throws -> String {
            do {
                try TokenRefresher.checkTokenResponse(try response(status), data: Data(body.utf8))
                return "ok"
            } catch let rejected as TokenRefresher.RefreshRejected {
                return "rejected \(rejected.oauthError ?? "-") \(rejected.response?.statusCode ?? 0)"
            } catch let error as NetworkAgentError {
                return "\(error.code) \(error.urlErrorCode.map { "\($0.rawValue)" } ?? "-") \(error.statusCode ?? 0)"
            }
        }
        let badServerResponse = URLError.Code.badServerResponse.rawValue
        #expect(try outcome(200, #"{"access_token":"a"}"#) == "ok")
        #expect(
            try outcome(400, #"{"error":"invalid_grant","error_description":"revoked"}"#)
                == "rejected invalid_grant 400"
        )
        #expect(try outcome(401, #"{"error":"invalid_grant"}"#) == "rejected invalid_grant 401")
        // Not the refresh token's fault: kept, not retried.
        #expect(try outcome(400, #"{"error":"invalid_client"}"#) == "unacceptable_status - 400")
        #expect(try outcome(401, "") == "unacceptable_status - 401")
        #expect(try outcome(403, #"{"error":"invalid_grant"}"#) == "unacceptable_status - 403")
        #expect(try outcome(400, #"["invalid_grant"]"#) == "unacceptable_status - 400")
        // Transient: a transport error with URLError.badServerResponse, which the retry plugin retries.
        for status in [408, 429, 500, 502, 503, 504] {
            #expect(try outcome(status, "<html>down</html>") == "transport \(badServerResponse) \(status)")
        }
        let notHTTP = URLResponse(
            url: try #require(URL(string: "https://h/")),
            mimeType: nil,
            expectedContentLength: 0,
            textEncodingName: nil
        )
        let error = #expect(throws: NetworkAgentError.self) {
            try TokenRefresher.checkTokenResponse(notHTTP, data: Data())
        }
        #expect(error?.code == .invalidResponse)
    }
}
