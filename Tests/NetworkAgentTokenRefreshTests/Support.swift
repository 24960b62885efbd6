import Dispatch
import Foundation
import NetworkAgent
import NetworkAgentAuth
import NetworkAgentTestServer
import NetworkAgentTestSupport
import NetworkAgentTokenRefresh

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// An API endpoint on the token server.
struct ApiEndpoint: AuthorizableEndpoint {
    var baseURL: URL
    var path = "/data"
    var headers: [String: String] = ["Accept": "application/json"]
    var authorization = AuthorizationRequirement.default
    var method: HTTPMethod { .get }
    var task: HTTPTask { .requestPlain }
}

/// The refresh endpoint: never authorized by the plugin, always sent through the agent.
struct RefreshEndpoint: AuthorizableEndpoint {
    var baseURL: URL
    var refreshToken: String
    var timeout: Duration?
    var path: String { "/refresh" }
    var method: HTTPMethod { .post }
    var task: HTTPTask { .requestAttributes(attributes: ["refresh_token": refreshToken], encoding: .json) }
    var authorization: AuthorizationRequirement { .none }
}

/// A loopback API that issues short-lived Bearer tokens: `/refresh` issues `t1`, `t2`, … and invalidates every
/// earlier token; any other path answers 200 to a valid token and 401 (`error="invalid_token"`) otherwise.
final class TokenServer: Sendable {
    struct State {
        var valid: Set<String>
        var issued = 0
        var refreshCalls = 0
        var rejections = 0
        var rejectsEverything = false
        var refreshFails = false
        /// When set, `/refresh` answers with this status and JSON body instead of issuing a token.
        var refreshAnswer: (status: Int, body: String)?
    }

    /// The state the server's handler shares with the test.
    final class Shared: Sendable {
        let state: Locked<State>

        init(_ state: State) {
            self.state = Locked(state)
        }
    }

    let shared: Shared
    private let refreshHold: DispatchSemaphore?
    private let server: LoopbackServer

    /// - Parameters:
    ///   - valid: The tokens accepted at first.
    ///   - holdsRefresh: Whether `/refresh` waits for ``releaseRefresh()`` (at most 10 s) before answering.
    init(valid: Set<String>, holdsRefresh: Bool = false) throws {
        let shared = Shared(State(valid: valid))
        let refreshHold = holdsRefresh ? DispatchSemaphore(value: 0) : nil
        self.shared = shared
        self.refreshHold = refreshHold
        server = try LoopbackServer { request in
            if request.path == "/refresh" {
                shared.state.withLock { $0.refreshCalls += 1 }
                _ = refreshHold?.wait(timeout: .now() + 10)
                return shared.state.withLock { state -> ServerResponse in
                    if state.refreshFails { return .json(Data(#"{"error":"invalid_grant"}"#.utf8), status: 400) }
                    if let answer = state.refreshAnswer { return .json(Data(answer.body.utf8), status: answer.status) }
                    state.issued += 1
                    let token = "t\(state.issued)"
                    state.valid = [token]
                    return .json(
                        Data(#"{"access_token":"\#(token)","expires_in":60,"refresh_token":"r\#(state.issued)"}"#.utf8)
                    )
                }
            }
            let presented = request.header("Authorization").map { String($0.dropFirst("Bearer ".count)) }
            return shared.state.withLock { state -> ServerResponse in
                if !state.rejectsEverything, let presented, state.valid.contains(presented) {
                    return .text("ok \(request.path) \(presented)")
                }
                state.rejections += 1
                return .text(
                    "expired",
                    status: 401,
                    headers: [("WWW-Authenticate", #"Bearer realm="api", error="invalid_token""#)]
                )
            }
        }
    }

    var baseURL: URL { server.baseURL }
    var requests: [ServerRequest] { server.requests }
    var refreshCalls: Int { shared.state.withLock { $0.refreshCalls } }
    var rejections: Int { shared.state.withLock { $0.rejections } }

    func update(_ change: (inout State) -> Void) {
        shared.state.withLock { change(&$0) }
    }

    /// Requests to paths other than `/refresh`.
    var apiRequests: [ServerRequest] { requests.filter { $0.path != "/refresh" } }

    func releaseRefresh() {
        for _ in 0..<16 { refreshHold?.signal() }
    }

    func stop() {
        releaseRefresh()
        server.stop()
    }

    /// The refresh call an app would write: a side request through the agent, checked with
    /// `TokenRefresher.checkTokenResponse`, decoded into a token.
    ///
    /// - Parameters:
    ///   - now: The clock that stamps the token's issue time.
    ///   - timeout: The refresh request's timeout.
    ///   - base: Where the refresh request goes; this server by default.
    func refreshCall(
        now: @escaping @Sendable () -> Date = { Date() },
        timeout: Duration? = nil,
        base: (@Sendable () -> URL)? = nil
    ) -> TokenRefresher.Refresh {
        let own = baseURL
        return { agent, current in
            let endpoint = RefreshEndpoint(
                baseURL: base?() ?? own,
                refreshToken: current?.refreshToken ?? "",
                timeout: timeout
            )
            let (data, response) = try await agent.request(endpoint)
            try TokenRefresher.checkTokenResponse(response, data: data)
            struct Body: Decodable {
                let accessToken: String
                let expiresIn: Int
                let refreshToken: String
            }
            let decoder = JSONDecoder()
            decoder.keyDecodingStrategy = .convertFromSnakeCase
            let body = try decoder.decode(Body.self, from: data)
            return AuthToken(
                credential: .bearer(body.accessToken),
                expiresIn: .seconds(body.expiresIn),
                issuedAt: now(),
                refreshToken: body.refreshToken
            )
        }
    }
}

/// Holds every request, inside the exchange, until `count` requests have arrived; later ones pass at once.
/// Registered after the token refresh plugin, it makes all requests leave with the same credential.
actor StartLine: NetworkAgentPlugin {
    let count: Int
    private var arrived = 0
    private var waiting: [CheckedContinuation<Void, Never>] = []

    init(_ count: Int) {
        self.count = count
    }

    private func arrive() async {
        arrived += 1
        if arrived >= count {
            for continuation in waiting { continuation.resume() }
            waiting = []
        } else {
            await withCheckedContinuation { waiting.append($0) }
        }
    }

    nonisolated func intercept(
        _ request: URLRequest,
        endpoint: any NetworkAgentEndpoint,
        next: NetworkAgentExchange
    ) async throws -> (data: Data, response: URLResponse) {
        await arrive()
        return try await next(request)
    }
}

/// Holds the first request for one path inside the exchange until opened.
actor PathGate: NetworkAgentPlugin {
    let path: String
    private var held = false
    private var isOpen = false
    private var openWaiters: [CheckedContinuation<Void, Never>] = []
    private var arrivalWaiters: [CheckedContinuation<Void, Never>] = []

    init(path: String) {
        self.path = path
    }

    func open() {
        isOpen = true
        for continuation in openWaiters { continuation.resume() }
        openWaiters = []
    }

    func waitForArrival() async {
        if held { return }
        await withCheckedContinuation { arrivalWaiters.append($0) }
    }

    private func pass(_ path: String) async {
        guard path == self.path, !held else { return }
        held = true
        for continuation in arrivalWaiters { continuation.resume() }
        arrivalWaiters = []
        if !isOpen { await withCheckedContinuation { openWaiters.append($0) } }
    }

    nonisolated func intercept(
        _ request: URLRequest,
        endpoint: any NetworkAgentEndpoint,
        next: NetworkAgentExchange
    ) async throws -> (data: Data, response: URLResponse) {
        await pass(request.url?.path ?? "")
        return try await next(request)
    }
}

/// Sets a header in `onRequest`.
struct HeaderSetter: NetworkAgentPlugin {
    let name: String
    let value: String

    func onRequest(_ request: URLRequest, endpoint: any NetworkAgentEndpoint) async throws -> URLRequest {
        var request = request
        request.setValue(value, forHTTPHeaderField: name)
        return request
    }
}

/// Numbers every pass through the exchange in a header, as an inner signing or tracing plugin might.
final class AttemptStamper: NetworkAgentPlugin {
    private let attempts = Locked(0)

    func intercept(
        _ request: URLRequest,
        endpoint: any NetworkAgentEndpoint,
        next: NetworkAgentExchange
    ) async throws -> (data: Data, response: URLResponse) {
        var request = request
        let attempt = attempts.withLock {
            $0 += 1
            return $0
        }
        request.setValue(String(attempt), forHTTPHeaderField: "X-Attempt")
        return try await next(request)
    }
}

/// Records the path of every request that goes through the chain's `onRequest`.
final class PathRecorder: NetworkAgentPlugin {
    private let paths = Locked<[String]>([])

    var all: [String] { paths.withLock { $0 } }

    func onRequest(_ request: URLRequest, endpoint: any NetworkAgentEndpoint) async throws -> URLRequest {
        paths.withLock { $0.append(request.url?.path ?? "") }
        return request
    }
}

/// Counts calls of the session-expired hook.
final class HookCounter: Sendable {
    private let storage = Locked<[TokenRefresher.Error]>([])

    var calls: [TokenRefresher.Error] { storage.withLock { $0 } }

    var hook: TokenRefresher.SessionExpiredHandler {
        { error in self.storage.withLock { $0.append(error) } }
    }
}

/// Waits until a condition holds, checking every few milliseconds, for at most `seconds`.
func waitUntil(
    seconds: Double = 10,
    _ condition: @Sendable () async -> Bool
) async throws -> Bool {
    let deadline = ContinuousClock.now + .seconds(seconds)
    while ContinuousClock.now < deadline {
        if await condition() { return true }
        try await Task.sleep(for: .milliseconds(2))
    }
    return await condition()
}

/// A compact JWT with the given `exp`, unsigned (the refresher never checks signatures).
func makeJWT(exp: Any) -> String {
    func base64URL(_ data: Data) -> String {
        data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
    let header = base64URL(Data(#"{"alg":"none","typ":"JWT"}"#.utf8))
    let payload = base64URL((try? JSONSerialization.data(withJSONObject: ["sub": "ann", "exp": exp])) ?? Data())
    return header + "." + payload + ".sig"
}

extension NetworkAgentProvider where E == ApiEndpoint {
    /// Runs `count` requests at once and returns what each threw (`nil` for a response).
    func concurrentErrors(_ count: Int, endpoint: ApiEndpoint) async -> [(any Error)?] {
        await withTaskGroup(of: (any Error)?.self) { group in
            for _ in 0..<count {
                group.addTask {
                    do {
                        _ = try await request(endpoint: endpoint)
                        return nil
                    } catch {
                        return error
                    }
                }
            }
            return await group.reduce(into: [(any Error)?]()) { $0.append($1) }
        }
    }
}
