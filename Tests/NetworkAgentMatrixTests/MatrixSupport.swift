import Foundation
import NetworkAgent
import NetworkAgentGzip
import NetworkAgentTestServer
import NetworkAgentTestSupport

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The transport every cell of the matrix runs on: this process's test transport (`NETWORKAGENT_TEST_TRANSPORT`,
/// `urlsession` or `curl`), a new one per cell.
func matrixTransport() -> any HTTPTransport {
    TestTransport.make()
}

/// A request of the matrix: every part set by the cell.
struct MatrixEndpoint: NetworkAgentEndpoint {
    var baseURL: URL
    var path: String
    var method = HTTPMethod.get
    var headers: [String: String] = [:]
    var task = HTTPTask.requestPlain
    var timeout: Duration? = .seconds(10)
}

/// Sends a side request through the agent (no plugin chain) before passing the call on, as a token refresher
/// does. Registered innermost.
struct SideRequester: NetworkAgentPlugin {
    let url: URL

    func intercept(
        _ request: URLRequest,
        endpoint: any NetworkAgentEndpoint,
        next: NetworkAgentExchange
    ) async throws -> (data: Data, response: URLResponse) {
        _ = try await next.agent.send(URLRequest(url: url))
        return try await next(request)
    }
}

/// Two loopback servers, the origin and another origin, answering every path of the matrix deterministically:
///
/// - `/data`: 200 with ``payload`` (`Cache-Control: max-age=60`); gzip-encoded when ``gzip`` is set and the request
///   accepts gzip, as a real server does;
/// - `/stream`: the same, chunked in three pieces;
/// - `/moved`: 302 to `/data`; `/away`: 302 to the other origin's `/data`;
/// - `/broken`: 200 with the full `Content-Length`, closed after 10 body bytes;
/// - `/truncated`: 200 with the first half of the (encoded) body, correctly framed;
/// - `/stall`: never answers (counted in ``stalls``);
/// - `/flaky`: 503 the first time, then as `/data`; `/always503`: 503;
/// - `/side`: 200 `side`, never checked for a token.
///
/// The other origin answers `/always503` with 503 and any other path as `/data`.
///
/// With ``requiredToken`` set, the origin answers 401 (`WWW-Authenticate: Bearer error="invalid_token"`) to every
/// path but `/side` that does not carry `Authorization: Bearer <token>`.
final class MatrixWorld: Sendable {
    /// The body every 200 carries (before any encoding): JSON long enough for gzip to matter.
    static let payload = Data(
        ("[" + (0..<60).map { "{\"id\":\($0),\"name\":\"pokemon number \($0)\"}" }.joined(separator: ",") + "]").utf8
    )

    let origin: LoopbackServer
    let other: LoopbackServer
    let gzip: Bool
    let requiredToken: String?
    private let counters = Locked((flaky: 0, stalls: 0))
    /// The paths the origin answered with a gzip-encoded body, in order.
    private let encoded = Locked<[String]>([])

    init(gzip: Bool = false, requiredToken: String? = nil) throws {
        self.gzip = gzip
        self.requiredToken = requiredToken
        let compressed = try Deflater.compress(Self.payload, format: .gzip)
        /// Whether the answer to `request` is gzip-encoded: in a gzip world, when the client asked for it.
        @Sendable func encodes(_ request: ServerRequest) -> Bool {
            gzip && (request.header("Accept-Encoding")?.contains("gzip") ?? false)
        }
        let counters = self.counters
        let encoded = self.encoded
        other = try LoopbackServer { request in
            if request.path == "/always503" { return .text("busy", status: 503) }
            return encodes(request) ? Self.ok(compressed, gzip: true) : Self.ok(Self.payload, gzip: false)
        }
        let otherData = other.baseURL.appendingPathComponent("data").absoluteString
        origin = try LoopbackServer { request in
            let gzip = encodes(request)
            let body = gzip ? compressed : Self.payload
            if let requiredToken, request.path != "/side", request.header("Authorization") != "Bearer \(requiredToken)"
            {
                return .text(
                    "{\"error\":\"invalid_token\"}",
                    status: 401,
                    headers: [("WWW-Authenticate", "Bearer error=\"invalid_token\"")]
                )
            }
            if gzip { encoded.withLock { $0.append(request.path) } }
            switch request.path {
            case "/stream":
                let third = body.count / 3
                let pieces = [body.prefix(third), body.dropFirst(third).prefix(third), body.dropFirst(2 * third)]
                return ServerResponse(
                    headers: Self.headers(gzip: gzip),
                    body: .chunked(pieces.map { Data($0) }, interval: .zero)
                )
            case "/moved":
                return ServerResponse(status: 302, headers: [("Location", "/data")])
            case "/away":
                return ServerResponse(status: 302, headers: [("Location", otherData)])
            case "/broken":
                return ServerResponse(
                    headers: Self.headers(gzip: gzip),
                    body: .data(body),
                    fault: .closeMidBody(afterBytes: 10)
                )
            case "/stall":
                counters.withLock { $0.stalls += 1 }
                return ServerResponse(fault: .stall)
            case "/flaky":
                let first = counters.withLock { counters in
                    counters.flaky += 1
                    return counters.flaky == 1
                }
                return first ? .text("busy", status: 503) : Self.ok(body, gzip: gzip)
            case "/truncated":
                // Well framed (the length is right), but the body is half a gzip stream.
                return ServerResponse(headers: Self.headers(gzip: gzip), body: .data(body.prefix(body.count / 2)))
            case "/always503":
                return .text("busy", status: 503)
            case "/side":
                return .text("side")
            default:
                return Self.ok(body, gzip: gzip)
            }
        }
    }

    deinit {
        origin.stop()
        other.stop()
    }

    /// How many `/stall` requests the origin has received.
    var stalls: Int { counters.withLock { $0.stalls } }

    /// How many times the origin answered `path` in gzip (past the token check; a `/flaky` 503 counts too).
    func gzipResponses(_ path: String) -> Int {
        encoded.withLock { $0.filter { $0 == path }.count }
    }

    /// The origin's requests for a path, in order.
    func requests(_ path: String) -> [ServerRequest] {
        origin.requests.filter { $0.path == path }
    }

    /// The request of the matrix for a path on the origin.
    func endpoint(_ path: String, method: HTTPMethod = .get, headers: [String: String] = [:]) -> MatrixEndpoint {
        MatrixEndpoint(baseURL: origin.baseURL, path: path, method: method, headers: headers)
    }

    private static func headers(gzip: Bool) -> [(name: String, value: String)] {
        [("Content-Type", "application/json"), ("Cache-Control", "max-age=60")]
            + (gzip ? [("Content-Encoding", "gzip")] : [])
    }

    private static func ok(_ body: Data, gzip: Bool) -> ServerResponse {
        ServerResponse(headers: headers(gzip: gzip), body: .data(body))
    }
}
