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
}
