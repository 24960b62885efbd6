import Foundation
import NetworkAgent
import NetworkAgentTestServer
import NetworkAgentTestSupport
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The core against httpbin, a server nobody in this project wrote.
@Suite(.enabled(if: Interop.httpbin != nil, "httpbin is not running (Scripts/interop/start)"))
struct HTTPBinTests {
    let base = Interop.httpbin ?? URL(fileURLWithPath: "/")
    let agent = NetworkAgent(transport: TestTransport.make())
    let decoder = JSONDecoder()

    func call(_ endpoint: PeerEndpoint) async throws -> (Data, HTTPURLResponse) {
        let (data, response) = try await agent.request(endpoint)
        return (data, try #require(response as? HTTPURLResponse))
    }

    @Test func getWithQuery() async throws {
        let (data, response) = try await call(
            PeerEndpoint(
                baseURL: base,
                path: "/get",
                task: .requestAttributes(attributes: ["q": "a+b c", "n": 1], encoding: .url)
            )
        )
        #expect(response.statusCode == 200)
        let echo = try decoder.decode(Echo.self, from: data)
        #expect(echo.args == ["n": "1", "q": "a+b c"])
        #expect(echo.headers?["User-Agent"]?.hasPrefix("NetworkAgent/") == true)
    }

    @Test func postJSON() async throws {
        let (data, _) = try await call(
            PeerEndpoint(
                baseURL: base,
                path: "/post",
                method: .post,
                headers: ["Content-Type": "application/json"],
                task: .requestAttributes(attributes: ["name": "pikachu", "level": 5, "shiny": false], encoding: .json)
            )
        )
        let echo = try decoder.decode(Echo.self, from: data)
        #expect(echo.json == ["name": .string("pikachu"), "level": .number(5), "shiny": .bool(false)])
    }

    @Test func postMultipartFieldsAndFiles() async throws {
        let parts = [
            HTTPMultipartTask(
                data: Data("hello file".utf8),
                name: "upload",
                filename: "a \"quoted\".txt",
                mimeType: "text/plain"
            ),
            HTTPMultipartTask(data: Data("public".utf8), name: "visibility"),
        ]
        let (data, _) = try await call(
            PeerEndpoint(
                baseURL: base,
                path: "/post",
                method: .post,
                headers: ["Content-Type": "multipart/form-data"],
                task: .upload(parts: parts)
            )
        )
        let echo = try decoder.decode(Echo.self, from: data)
        #expect(echo.files == ["upload": "hello file"])
        #expect(echo.form == ["visibility": "public"])
    }

    @Test func largeMultipartFileStreamsFromDisk() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("interop-\(UUID().uuidString).txt")
        try Data(repeating: UInt8(ascii: "x"), count: 10 << 20).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let agent = NetworkAgent(
            transport: TestTransport.make(),
            configuration: .init(multipartMemoryThreshold: 1 << 20)
        )
        let (data, _) = try await agent.request(
            PeerEndpoint(
                baseURL: base,
                path: "/post",
                method: .post,
                headers: ["Content-Type": "multipart/form-data"],
                task: .upload(parts: [HTTPMultipartTask(fileURL: file, name: "big", mimeType: "text/plain")]),
                timeout: .seconds(60)
            )
        )
        let echo = try decoder.decode(Echo.self, from: data)
        #expect(echo.files?["big"]?.count == 10 << 20)
    }

    @Test func basicAuthWithAHeader() async throws {
        let credentials = Data("user:pass".utf8).base64EncodedString()
        let (_, ok) = try await call(
            PeerEndpoint(
                baseURL: base,
                path: "/basic-auth/user/pass",
                headers: ["Authorization": "Basic \(credentials)"]
            )
        )
        #expect(ok.statusCode == 200)
    }

    @Test func aBasicChallengeComesBackPromptly() async throws {
        let (_, response) = try await call(PeerEndpoint(baseURL: base, path: "/status/401", timeout: .seconds(5)))
        #expect(response.statusCode == 401)
        #expect(response.value(forHTTPHeaderField: "WWW-Authenticate")?.hasPrefix("Basic") == true)
    }

    @Test func bearer() async throws {
        let (_, missing) = try await call(PeerEndpoint(baseURL: base, path: "/bearer"))
        #expect(missing.statusCode == 401)
        let (_, ok) = try await call(
            PeerEndpoint(baseURL: base, path: "/bearer", headers: ["Authorization": "Bearer abc"])
        )
        #expect(ok.statusCode == 200)
    }

    @Test func threeRedirects() async throws {
        let (_, response) = try await call(PeerEndpoint(baseURL: base, path: "/redirect/3"))
        #expect(response.statusCode == 200)
        #expect(response.url?.path == "/get")
    }

    @Test func a307KeepsTheBody() async throws {
        let (data, _) = try await call(
            PeerEndpoint(
                baseURL: base,
                path: "/redirect-to",
                method: .post,
                headers: ["Content-Type": "text/plain"],
                task: .requestWithoutAttributes(content: "keep me")
            ).withQuery(["url": "/post", "status_code": "307"])
        )
        #expect(try decoder.decode(Echo.self, from: data).data == "keep me")
    }

    @Test func aRedirectToAnotherOriginDropsCredentials() async throws {
        let other = try LoopbackServer { request in .text(request.header("Authorization") ?? "none") }
        let (data, _) = try await call(
            PeerEndpoint(baseURL: base, path: "/redirect-to", headers: ["Authorization": "Bearer secret"])
                .withQuery(["url": other.baseURL.absoluteString + "/landing"])
        )
        #expect(String(decoding: data, as: UTF8.self) == "none")
        #expect(other.requestCount == 1)
    }

    @Test func aSlowAnswerHitsASubSecondDeadline() async throws {
        let started = ContinuousClock.now
        let error = await #expect(throws: NetworkAgentError.self) {
            try await call(PeerEndpoint(baseURL: base, path: "/delay/3", timeout: .milliseconds(300)))
        }
        let elapsed = started.duration(to: .now)
        #expect(error?.code == .timedOut)
        // The 300 ms deadline, not whole seconds (a rounded or idle timeout) nor httpbin's 3 s.
        #expect(elapsed >= .milliseconds(250), "timed out after \(elapsed), before the 300 ms deadline")
        #expect(elapsed < .milliseconds(1500), "timed out after \(elapsed) for a 300 ms deadline")
    }

    /// Each path, the flag httpbin sets in the JSON it compresses, and its `Content-Encoding`. Without the gzip
    /// plugin: libcurl under URLSessionTransport decodes all three; CurlTransport hands them over as sent.
    @Test(arguments: [("/gzip", "gzipped", "gzip"), ("/deflate", "deflated", "deflate"), ("/brotli", "brotli", "br")])
    func compressedResponsesArriveAsTheTransportPromises(path: String, flag: String, encoding: String) async throws {
        let (data, response) = try await call(PeerEndpoint(baseURL: base, path: path))
        if TestTransport.kind == .curl {
            #expect(response.value(forHTTPHeaderField: "Content-Encoding") == encoding)
            #expect((try? JSONSerialization.jsonObject(with: data)) == nil, "\(path) arrived decoded")
            return
        }
        let object = try #require(
            try JSONSerialization.jsonObject(with: data) as? [String: Any],
            "\(path) did not decode to JSON"
        )
        #expect(object[flag] as? Bool == true, "\(path): \(object)")
    }

    @Test func streamTwentyLines() async throws {
        let provider = NetworkAgentProvider<PeerEndpoint>(agent: agent)
        let stream = try await provider.stream(endpoint: PeerEndpoint(baseURL: base, path: "/stream/20"))
        struct Line: Decodable { let id: Int }
        var ids: [Int] = []
        for try await line in stream.body.ndjson(as: Line.self) { ids.append(line.id) }
        #expect(ids == Array(0..<20))
    }

    @Test func dripArrivesInPieces() async throws {
        let provider = NetworkAgentProvider<PeerEndpoint>(agent: agent)
        let stream = try await provider.stream(
            endpoint: PeerEndpoint(baseURL: base, path: "/drip").withQuery([
                "numbytes": "5", "duration": "1", "delay": "0",
            ])
        )
        var chunks = 0
        var bytes = 0
        for try await chunk in stream.body {
            chunks += 1
            bytes += chunk.count
        }
        #expect(bytes == 5)
        #expect(chunks > 1)
    }
}

extension PeerEndpoint {
    /// The same endpoint with a URL query.
    func withQuery(_ query: [String: String]) -> PeerEndpoint {
        var endpoint = self
        var components = URLComponents(url: baseURL, resolvingAgainstBaseURL: false)
        components?.queryItems = query.sorted { $0.key < $1.key }.map { URLQueryItem(name: $0.key, value: $0.value) }
        if let url = components?.url { endpoint.baseURL = url }
        return endpoint
    }
}
