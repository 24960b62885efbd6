import Foundation
import NetworkAgent
import Testing

@testable import NetworkAgentAuth
@testable import NetworkAgentTokenRefresh

/// The refresher publishes its current credential with its `Authorization` value, made once per token: the value
/// follows every change of the token and is the credential's own.
@Suite struct PreparedTokenTests {
    @Test func thePublishedValueFollowsTheToken() async throws {
        let refresher = TokenRefresher(token: AuthToken(credential: .bearer("first"))) { _, _ in
            AuthToken(credential: .bearer("never"))
        }
        #expect(try refresher.preparedCredentialForNewRequest() == PreparedCredential(.bearer("first")))
        #expect(try refresher.preparedCredentialForNewRequest()?.authorizationValue == "Bearer first")
        await refresher.setToken(AuthToken(credential: .basic(username: "u", password: "p")))
        #expect(
            try refresher.preparedCredentialForNewRequest()?.authorizationValue
                == "Basic " + Data("u:p".utf8).base64EncodedString()
        )
        await refresher.setToken(AuthToken(credential: .bearer("bad\nvalue")))
        // A token the check refuses has no value: each request's authorization throws, as it did.
        #expect(try refresher.preparedCredentialForNewRequest() == PreparedCredential(.bearer("bad\nvalue")))
        #expect(try refresher.preparedCredentialForNewRequest()?.authorizationValue == nil)
        await refresher.setToken(nil)
        #expect(try refresher.preparedCredentialForNewRequest() == nil)
    }
}
