import Foundation
import NetworkAgent
import NetworkAgentAuth
import NetworkAgentDiskCache
import NetworkAgentGzip
import NetworkAgentRetry
import NetworkAgentTestServer
import NetworkAgentTestSupport
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The plugins against httpbin.
@Suite(.enabled(if: Interop.httpbin != nil, "httpbin is not running (Scripts/interop/start)"))
struct HTTPBinPluginTests {
    let base = Interop.httpbin ?? URL(fileURLWithPath: "/")

    func provider(_ plugins: [any NetworkAgentPlugin]) -> NetworkAgentProvider<PeerEndpoint> {
        NetworkAgentProvider(plugins: plugins, agent: NetworkAgent(transport: TestTransport.make()))
    }

    func status(_ response: URLResponse) -> Int? { (response as? HTTPURLResponse)?.statusCode }

    @Test func basicAuthThroughTheAuthPlugin() async throws {
        let good = provider([.auth(.basic(username: "user", password: "pa:ss")), .validate()])
        let (data, _) = try await good.request(endpoint: PeerEndpoint(baseURL: base, path: "/basic-auth/user/pa:ss"))
        let object = try JSONSerialization.jsonObject(with: data) as? [String: Any]
        #expect(object?["authenticated"] as? Bool == true)

        let wrong = provider([.auth(.basic(username: "user", password: "nope"))])
        let (_, response) = try await wrong.request(
            endpoint: PeerEndpoint(baseURL: base, path: "/basic-auth/user/pa:ss")
        )
        #expect(status(response) == 401)
    }

    @Test func bearerThroughTheAuthPlugin() async throws {
        let (data, _) = try await provider([.auth(.bearer("t0k3n")), .validate()])
            .request(endpoint: PeerEndpoint(baseURL: base, path: "/bearer"))
        let object = try JSONSerialization.jsonObject(with: data) as? [String: Any]
        #expect(object?["token"] as? String == "t0k3n")
    }

    @Test(arguments: ["/gzip", "/deflate"])
    func compressedResponsesThroughTheGzipPlugin(path: String) async throws {
        let (data, response) = try await provider([.gzip()]).request(endpoint: PeerEndpoint(baseURL: base, path: path))
        let http = try #require(response as? HTTPURLResponse)
        #expect(http.value(forHTTPHeaderField: "Content-Encoding") == nil, "the plugin normalises the headers")
        #expect((try JSONSerialization.jsonObject(with: data) as? [String: Any]) != nil)
    }

    @Test func aGzippedRequestBodyReachesHTTPBin() async throws {
        let text = String(repeating: "pokemon ", count: 1000)
        let (data, _) = try await provider([.gzip(minimumBodySize: 100)]).request(
            endpoint: PeerEndpoint(
                baseURL: base,
                path: "/anything",
                method: .post,
                headers: ["Content-Type": "text/plain"],
                task: .requestWithoutAttributes(content: text)
            )
        )
        let echo = try JSONDecoder().decode(Echo.self, from: data)
        #expect(echo.headers?["Content-Encoding"] == "gzip")
        // httpbin echoes the raw body it received: the compressed bytes, as a data URL.
        let payload = try #require(echo.data)
        #expect(payload.hasPrefix("data:application/octet-stream;base64,"))
        let compressed = try #require(
            Data(base64Encoded: String(payload.dropFirst("data:application/octet-stream;base64,".count)))
        )
        #expect(try Inflater.decompress(compressed) == Data(text.utf8))
    }

    @Test func etagRevalidationReturns304AndServesTheStoredBody() async throws {
        let cache = try cacheInTemporaryDirectory()
        let chain = provider([cache])
        let endpoint = PeerEndpoint(baseURL: base, path: "/etag/pikachu-1")
        let (first, response) = try await chain.request(endpoint: endpoint)
        #expect(status(response) == 200)
        let (second, revalidated) = try await chain.request(endpoint: endpoint)
        #expect(second == first)
        #expect(status(revalidated) == 200)
        #expect(CacheStatus(response: revalidated) == .revalidated)
        #expect(cache.stats.revalidated == 1)
    }

    @Test func freshHitsNeedNoRequest() async throws {
        let cache = try cacheInTemporaryDirectory()
        let chain = provider([cache])
        let endpoint = PeerEndpoint(baseURL: base, path: "/cache/60")
        _ = try await chain.request(endpoint: endpoint)
        let (_, response) = try await chain.request(endpoint: endpoint)
        #expect(CacheStatus(response: response) == .hit)
        #expect(cache.stats.hits == 1)
    }

    @Test func noStoreFromResponseHeadersIsNeverCached() async throws {
        let cache = try cacheInTemporaryDirectory()
        let chain = provider([cache])
        let endpoint = PeerEndpoint(baseURL: base, path: "/response-headers").withQuery(["Cache-Control": "no-store"])
        _ = try await chain.request(endpoint: endpoint)
        let (_, response) = try await chain.request(endpoint: endpoint)
        #expect(CacheStatus(response: response) == .miss)
        #expect(cache.stats.stored == 0)
    }

    @Test func maxAgeFromResponseHeadersIsHonoured() async throws {
        let cache = try cacheInTemporaryDirectory()
        let chain = provider([cache])
        let endpoint = PeerEndpoint(baseURL: base, path: "/response-headers").withQuery(["Cache-Control": "max-age=120"]
        )
        _ = try await chain.request(endpoint: endpoint)
        let (_, response) = try await chain.request(endpoint: endpoint)
        #expect(CacheStatus(response: response) == .hit)
    }

    @Test func a503IsRetriedThenReturned() async throws {
        let scheduled = Locked(0)
        let policy = RetryPlugin.Policy(
            maximumAttempts: 3,
            baseDelay: .milliseconds(20),
            maximumDelay: .milliseconds(50)
        )
        let (_, response) = try await NetworkAgentEvents.observing({ event in
            if event.source == "retry", event.name == "retry_scheduled" { scheduled.withLock { $0 += 1 } }
        }) {
            try await provider([.retry(policy)]).request(endpoint: PeerEndpoint(baseURL: base, path: "/status/503"))
        }
        #expect(status(response) == 503)
        #expect(scheduled.withLock { $0 } == 2)
    }

    func cacheInTemporaryDirectory() throws -> DiskCachePlugin {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "interop-cache-\(UUID().uuidString)"
        )
        return try DiskCachePlugin(directory: directory)
    }
}
