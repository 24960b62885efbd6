import Foundation
import NetworkAgent
import NetworkAgentAuth

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// An endpoint whose every part a test can set, including its authorization requirement.
struct AuthEndpoint: AuthorizableEndpoint {
    var baseURL: URL
    var path = "/"
    var method = HTTPMethod.get
    var headers: [String: String] = ["Accept": "application/json"]
    var task = HTTPTask.requestPlain
    var authorization = AuthorizationRequirement.default
}

/// A credential provider that counts its calls.
final class CountingProvider: Sendable {
    private let calls = Locked(0)
    let credential: Credential?

    init(_ credential: Credential?) {
        self.credential = credential
    }

    var count: Int { calls.withLock { $0 } }

    var provide: AuthPlugin.CredentialProvider {
        { [self] in
            calls.withLock { $0 += 1 }
            return credential
        }
    }
}

/// Points every request at another base URL in `onRequest`, as a mirror or CDN plugin might.
struct Redirector: NetworkAgentPlugin {
    let target: URL

    func onRequest(_ request: URLRequest, endpoint: any NetworkAgentEndpoint) async throws -> URLRequest {
        var request = request
        guard let url = request.url, var components = URLComponents(url: url, resolvingAgainstBaseURL: true),
            let replacement = URLComponents(url: target, resolvingAgainstBaseURL: true)
        else { return request }
        components.scheme = replacement.scheme
        components.host = replacement.host
        components.port = replacement.port
        request.url = components.url
        return request
    }
}
