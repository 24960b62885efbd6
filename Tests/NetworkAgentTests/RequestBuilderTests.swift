import Foundation
import NetworkAgent
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// An endpoint whose every part a test sets.
struct TestEndpoint: NetworkAgentEndpoint {
    var baseURL = URL(string: "http://127.0.0.1:1/api")!
    var path = "/items"
    var method = HTTPMethod.get
    var headers: [String: String] = ["Content-Type": "application/json", "Accept": "application/json"]
    var task = HTTPTask.requestPlain
    var timeout: Duration?
}

struct Widget: Codable, Equatable {
    let id: Int
    let name: String
}

@Suite struct RequestBuilderTests {
    let agent = NetworkAgent(transport: URLSessionTransport.shared)

    func build(_ endpoint: TestEndpoint) throws -> URLRequest {
        try agent.urlRequest(for: endpoint)
    }

    @Test(arguments: [
        ("http://h/api", "/items", "http://h/api/items"),
        ("http://h/api/", "/items", "http://h/api/items"),
        ("http://h/api/", "items", "http://h/api/items"),
        ("http://h/api//", "//items/", "http://h/api/items/"),
        ("http://h", "/items", "http://h/items"),
        ("http://h/", "", "http://h/"),
        ("http://h/api", "", "http://h/api"),
        ("http://h/api", "/a b/ü?#%", "http://h/api/a%20b/%C3%BC%3F%23%25"),
        ("http://h/api", "/pokemon/25/", "http://h/api/pokemon/25/"),
        ("http://h/v1?key=k", "/x", "http://h/v1/x?key=k"),
    ])
    func joinsBaseURLAndPath(base: String, path: String, expected: String) throws {
        let request = try build(TestEndpoint(baseURL: URL(string: base)!, path: path))
        #expect(request.url?.absoluteString == expected)
    }

    @Test func methodIsUppercasedAndHeadersApplied() throws {
        let request = try build(TestEndpoint(method: .patch, headers: ["X-Trace": "1"]))
        #expect(request.httpMethod == "PATCH")
        #expect(request.value(forHTTPHeaderField: "x-trace") == "1")
        #expect(request.value(forHTTPHeaderField: "User-Agent")?.hasPrefix("NetworkAgent/") == true)
    }

    @Test func defaultHeadersAreJSON() {
        struct Plain: NetworkAgentEndpoint {
            var baseURL: URL { URL(string: "http://h")! }
            var path: String { "/" }
            var method: HTTPMethod { .get }
            var task: HTTPTask { .requestPlain }
        }
        #expect(Plain().headers == ["Content-Type": "application/json", "Accept": "application/json"])
    }

    @Test func queryIsSortedAndEncoded() throws {
        let attributes: [String: any Sendable] = [
            "q": "a+b c&d=é", "limit": 20, "offset": 0, "flag": true, "ids": [3, 1],
            "filter": ["z": 1, "a": "x"] as [String: any Sendable],
            "missing": String?.none as any Sendable, "null": NSNull(),
        ]
        let request = try build(TestEndpoint(task: .requestAttributes(attributes: attributes, encoding: .url)))
        #expect(
            request.url?.absoluteString
                == "http://127.0.0.1:1/api/items?filter%5Ba%5D=x&filter%5Bz%5D=1&flag=true&ids=3&ids=1&limit=20"
                + "&null=&offset=0&q=a%2Bb%20c%26d%3D%C3%A9"
        )
    }

    @Test func equalEndpointsGiveEqualURLs() throws {
        var attributes: [String: any Sendable] = [:]
        for index in 0..<50 { attributes["k\(index)"] = index }
        let first = try build(TestEndpoint(task: .requestAttributes(attributes: attributes, encoding: .url)))
        let second = try build(TestEndpoint(task: .requestAttributes(attributes: attributes, encoding: .url)))
        #expect(first.url == second.url)
    }

    @Test func jsonBodyIsSortedJSON() throws {
        let request = try build(
            TestEndpoint(method: .post, task: .requestAttributes(attributes: ["b": 1, "a": "x"], encoding: .json))
        )
        #expect(request.httpBody == Data(#"{"a":"x","b":1}"#.utf8))
    }

    @Test func unencodableJSONIsATypedError() {
        for value in [Date() as any Sendable, Double.nan, ["nested": Date()]] {
            let endpoint = TestEndpoint(
                method: .post,
                task: .requestAttributes(attributes: ["v": value], encoding: .json)
            )
            #expect { try build(endpoint) } throws: { ($0 as? NetworkAgentError)?.code == .encoding }
        }
    }

    @Test func bodyOnGETIsATypedError() {
        let endpoint = TestEndpoint(method: .get, task: .requestAttributes(attributes: ["a": 1], encoding: .json))
        #expect { try build(endpoint) } throws: { ($0 as? NetworkAgentError)?.code == .encoding }
    }

    @Test func formBody() throws {
        let request = try build(
            TestEndpoint(
                method: .post,
                headers: [:],
                task: .requestAttributes(attributes: ["a": "1 2", "b": "+"], encoding: .form)
            )
        )
        #expect(request.httpBody == Data("a=1%202&b=%2B".utf8))
        #expect(request.value(forHTTPHeaderField: "Content-Type") == "application/x-www-form-urlencoded")
    }

    @Test func formBodyWithTheDefaultHeadersIsLabelledAsAForm() throws {
        let request = try build(
            TestEndpoint(method: .post, task: .requestAttributes(attributes: ["a": "1"], encoding: .form))
        )
        #expect(request.value(forHTTPHeaderField: "Content-Type") == "application/x-www-form-urlencoded")
        let custom = try build(
            TestEndpoint(
                method: .post,
                headers: ["Content-Type": "application/x-www-form-urlencoded; charset=utf-8"],
                task: .requestAttributes(attributes: ["a": "1"], encoding: .form)
            )
        )
        #expect(custom.value(forHTTPHeaderField: "Content-Type") == "application/x-www-form-urlencoded; charset=utf-8")
    }

    @Test func requestWithoutAttributesSendsItsContent() throws {
        let encodable = try build(
            TestEndpoint(
                method: .post,
                headers: [:],
                task: .requestWithoutAttributes(content: Widget(id: 1, name: "w"))
            )
        )
        #expect(encodable.httpBody == Data(#"{"id":1,"name":"w"}"#.utf8))
        #expect(encodable.value(forHTTPHeaderField: "Content-Type") == "application/json")

        let data = try build(
            TestEndpoint(method: .put, headers: [:], task: .requestWithoutAttributes(content: Data([0, 1, 2])))
        )
        #expect(data.httpBody == Data([0, 1, 2]))
        #expect(data.value(forHTTPHeaderField: "Content-Type") == "application/octet-stream")

        let text = try build(
            TestEndpoint(method: .post, headers: [:], task: .requestWithoutAttributes(content: "héllo"))
        )
        #expect(text.httpBody == Data("héllo".utf8))
        #expect(text.value(forHTTPHeaderField: "Content-Type") == "text/plain; charset=utf-8")

        let declared = try build(TestEndpoint(method: .post, task: .requestWithoutAttributes(content: "{}")))
        #expect(declared.value(forHTTPHeaderField: "Content-Type") == "application/json")
    }

    @Test func unsupportedContentIsATypedError() {
        struct Opaque: Sendable {}
        let endpoint = TestEndpoint(method: .post, task: .requestWithoutAttributes(content: Opaque()))
        #expect { try build(endpoint) } throws: { ($0 as? NetworkAgentError)?.code == .encoding }
    }

    @Test(arguments: [
        ("X-Evil", "a\r\nInjected: yes"), ("X-Evil", "a\nb"), ("X-Evil", "a\0b"), ("Bad Name", "v"), ("", "v"),
        ("X:Y", "v"),
    ])
    func headerInjectionIsRefused(name: String, value: String) {
        let endpoint = TestEndpoint(headers: [name: value])
        #expect { try build(endpoint) } throws: { ($0 as? NetworkAgentError)?.code == .invalidHeader }
    }

    @Test func invalidBaseURLIsATypedError() {
        let endpoint = TestEndpoint(baseURL: URL(string: "relative/path")!)
        #expect { try build(endpoint) } throws: { ($0 as? NetworkAgentError)?.code == .invalidURL }
    }

    @Test func timeoutComesFromEndpointOrConfiguration() throws {
        #expect(try build(TestEndpoint(timeout: .milliseconds(250))).timeoutInterval == 0.25)
        let configured = NetworkAgent(transport: URLSessionTransport.shared, configuration: .init(timeout: .seconds(7)))
        #expect(try configured.urlRequest(for: TestEndpoint()).timeoutInterval == 7)
    }

    @Test func userAgentCarriesAppTokenUnlessOverridden() throws {
        let configured = NetworkAgent(
            transport: URLSessionTransport.shared,
            configuration: .init(appToken: "Pokedex/1.0")
        )
        #expect(
            try configured.urlRequest(for: TestEndpoint()).value(forHTTPHeaderField: "User-Agent")
                == "NetworkAgent/\(NetworkAgentConfiguration.libraryVersion) Pokedex/1.0"
        )
        let own = try build(TestEndpoint(headers: ["User-Agent": "Mine/2"]))
        #expect(own.value(forHTTPHeaderField: "User-Agent") == "Mine/2")
    }

    /// The default goes in only when no endpoint field is a `User-Agent` in any case, filed as `User-Agent`; an
    /// endpoint's own, in any case and even empty, is the one field of that name.
    @Test func theDefaultUserAgentIsAddedOnlyWithoutAnEndpointOneInAnyCase() throws {
        let plain = try build(TestEndpoint(headers: ["Accept": "text/plain", "User-Agenz": "z"]))
        let agent = try #require(plain.allHTTPHeaderFields?["User-Agent"])
        #expect(agent.hasPrefix("NetworkAgent/"))
        #expect(plain.allHTTPHeaderFields?.keys.sorted() == ["Accept", "User-Agent", "User-Agenz"])
        for name in ["user-agent", "USER-AGENT", "User-agent"] {
            for value in ["Mine/3", ""] {
                let request = try build(TestEndpoint(headers: [name: value, "Accept": "*/*"]))
                let fields = try #require(request.allHTTPHeaderFields)
                let agents = fields.filter { $0.key.lowercased() == "user-agent" }
                #expect(agents.count == 1, "\(name)")
                #expect(agents.first?.value == value, "\(name)")
                #expect(fields["Accept"] == "*/*")
            }
        }
    }
}

extension RequestBuilderTests {
    @Test(
        "17.16 a dot segment in an endpoint path is refused with invalidURL",
        arguments: ["../admin", "/..", "a/../../admin", "./x", "/a/./b", ".", "..", "a/.."]
    )
    func dotSegmentsAreRefused(path: String) throws {
        let base = try #require(URL(string: "https://api.example/v1/"))
        let error = #expect(throws: NetworkAgentError.self) { try build(TestEndpoint(baseURL: base, path: path)) }
        #expect(error?.code == .invalidURL)
        #expect(error?.message.contains("dot segment") == true)
    }

    @Test(
        "17.16 percent-encoded dots in a path stay a literal segment",
        arguments: [
            ("%2e%2e/admin", "https://api.example/v1/%252e%252e/admin"),
            ("%2E%2e/admin", "https://api.example/v1/%252E%252e/admin"),
            (".%2e/admin", "https://api.example/v1/.%252e/admin"),
            ("%2e/x", "https://api.example/v1/%252e/x"),
            ("...", "https://api.example/v1/..."),
            ("a..b/.c", "https://api.example/v1/a..b/.c"),
        ]
    )
    func encodedDotsStayLiteral(path: String, expected: String) throws {
        let base = try #require(URL(string: "https://api.example/v1/"))
        let request = try build(TestEndpoint(baseURL: base, path: path))
        #expect(request.url?.absoluteString == expected)
        // What a normalising server sees: the path keeps its prefix, nothing climbs above /v1.
        #expect(request.url?.standardized.path.hasPrefix("/v1/") == true)
    }
}
