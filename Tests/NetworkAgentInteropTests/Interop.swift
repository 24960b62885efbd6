import Foundation
import NetworkAgent
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Where the real peers run: `Scripts/interop/start` starts them and `Scripts/test` exports their URLs (the names
/// are listed in that script's header).
enum Interop {
    static let environment = ProcessInfo.processInfo.environment
    static let httpbin = environment["NETWORKAGENT_HTTPBIN_URL"].flatMap(URL.init(string:))
    static let nginx = environment["NETWORKAGENT_NGINX_URL"].flatMap(URL.init(string:))
    /// nginx's prefix: its logs (`counted.log`) and certificates.
    static let nginxDirectory = environment["NETWORKAGENT_NGINX_DIR"].map { URL(fileURLWithPath: $0) }
    /// The same routes as ``nginx`` over HTTPS with HTTP/2, certificate signed by ``testCA``.
    static let nginxHTTPS = environment["NETWORKAGENT_NGINX_HTTPS_URL"].flatMap(URL.init(string:))
    /// HTTPS with a certificate from ``testCA`` that names only `wrong.example`.
    static let nginxHTTPSMismatch = environment["NETWORKAGENT_NGINX_HTTPS_MISMATCH_URL"].flatMap(URL.init(string:))
    /// HTTPS with a certificate for `127.0.0.1` signed by a CA that no client is told about.
    static let nginxHTTPSUnknownCA = environment["NETWORKAGENT_NGINX_HTTPS_UNKNOWN_CA_URL"].flatMap(
        URL.init(string:)
    )
    /// The PEM file of the CA that signed ``nginxHTTPS``'s certificate.
    static let testCA = environment["NETWORKAGENT_TEST_CA"].map { URL(fileURLWithPath: $0) }
    /// Runs a suite only when nginx serves HTTPS from ``testCA``'s certificates.
    static let nginxHTTPSIsUp: ConditionTrait = .enabled(
        if: nginxHTTPS != nil && testCA != nil,
        "nginx is not serving HTTPS (Scripts/interop/start, with openssl installed)"
    )
    /// ``nginxHTTPS``'s public key as libcurl pins it: `sha256//` and the base64 SHA-256 of its DER
    /// SubjectPublicKeyInfo.
    static let nginxHTTPSPin = environment["NETWORKAGENT_NGINX_HTTPS_PIN"]
    static let isCI = environment["CI"] == "true"
}

/// An endpoint on a real peer.
struct PeerEndpoint: NetworkAgentEndpoint {
    var baseURL: URL
    var path: String
    var method: HTTPMethod = .get
    var headers: [String: String] = ["Accept": "application/json"]
    var task: HTTPTask = .requestPlain
    var timeout: Duration? = .seconds(15)
}

/// httpbin's echo of a request.
struct Echo: Decodable {
    let args: [String: String]?
    let headers: [String: String]?
    let json: [String: JSONValue]?
    let form: [String: String]?
    let files: [String: String]?
    let data: String?
    let url: String?
}

/// Any JSON value, for comparing echoes.
enum JSONValue: Decodable, Equatable {
    case string(String), number(Double), bool(Bool), null, array([JSONValue]), object([String: JSONValue])

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([JSONValue].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }
}

@Suite struct InteropPeers {
    /// Outside CI the peers are optional (the interop suites then report themselves skipped), so this test is
    /// reported as skipped too rather than passing without checking anything.
    @Test(.enabled(if: Interop.isCI, "outside CI (CI=true) the interop peers are optional"))
    func peersAreUpWhenCIRuns() {
        #expect(Interop.httpbin != nil, "CI must run the interop suite: NETWORKAGENT_HTTPBIN_URL is not set")
        #expect(Interop.nginx != nil, "CI must run the interop suite: NETWORKAGENT_NGINX_URL is not set")
        #expect(
            Interop.nginxHTTPS != nil && Interop.testCA != nil && Interop.nginxHTTPSPin != nil,
            "CI must run the HTTPS interop suite: NETWORKAGENT_NGINX_HTTPS_URL etc. are not set (openssl missing?)"
        )
    }
}
