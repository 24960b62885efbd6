import Foundation
import NetworkAgent
import NetworkAgentAuth
import NetworkAgentDiskCache
import NetworkAgentGzip
import NetworkAgentTestSupport
import NetworkAgentTokenRefresh
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The core and the plugins against nginx (Scripts/nginx/nginx.conf.template: gzip on, etag on, a Bearer-protected
/// location).
@Suite(.enabled(if: Interop.nginx != nil, "nginx is not running (Scripts/interop/start)"))
struct NginxTests {
    let base = Interop.nginx ?? URL(fileURLWithPath: "/")

    func provider(_ plugins: [any NetworkAgentPlugin]) -> NetworkAgentProvider<PeerEndpoint> {
        NetworkAgentProvider(plugins: plugins, agent: NetworkAgent(transport: TestTransport.make()))
    }

    @Test func gzippedStaticJSONArrivesDecodedWithConsistentHeaders() async throws {
        let (plain, _) = try await provider([]).request(endpoint: PeerEndpoint(baseURL: base, path: "/plain/data.json"))
        let (data, response) = try await provider([.gzip(), .validate()])
            .request(endpoint: PeerEndpoint(baseURL: base, path: "/data.json", headers: ["Accept-Encoding": "gzip"]))
        #expect(data == plain)
        #expect(data.count == 1024)
        let http = try #require(response as? HTTPURLResponse)
        #expect(http.value(forHTTPHeaderField: "Content-Encoding") == nil)
    }

    @Test func etagRevalidationThroughTheCache() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "nginx-cache-\(UUID().uuidString)"
        )
        defer { try? FileManager.default.removeItem(at: directory) }
        let cache = try DiskCachePlugin(directory: directory)
        let chain = provider([cache, .validate()])
        let (first, _) = try await chain.request(endpoint: PeerEndpoint(baseURL: base, path: "/plain/data.json"))
        // no-cache on the request forces a revalidation: nginx answers 304 to the stored ETag.
        let (second, response) = try await chain.request(
            endpoint: PeerEndpoint(baseURL: base, path: "/plain/data.json", headers: ["Cache-Control": "no-cache"])
        )
        #expect(second == first)
        #expect(CacheStatus(response: response) == .revalidated)
        #expect(cache.stats.revalidated == 1)
    }

    @Test func conditionalRequestsGet304() async throws {
        let agent = NetworkAgent(transport: TestTransport.make())
        let (_, response) = try await agent.request(PeerEndpoint(baseURL: base, path: "/plain/data.json"))
        let http = try #require(response as? HTTPURLResponse)
        let etag = try #require(http.value(forHTTPHeaderField: "ETag"))
        let lastModified = try #require(http.value(forHTTPHeaderField: "Last-Modified"))
        for headers in [["If-None-Match": etag], ["If-Modified-Since": lastModified]] {
            let (body, conditional) = try await agent.request(
                PeerEndpoint(baseURL: base, path: "/plain/data.json", headers: headers)
            )
            #expect((conditional as? HTTPURLResponse)?.statusCode == 304, "\(headers)")
            #expect(body.isEmpty)
        }
    }

    @Test func theProtectedLocationWithTheAuthPlugin() async throws {
        let (_, denied) = try await provider([]).request(
            endpoint: PeerEndpoint(baseURL: base, path: "/protected/data.json")
        )
        #expect((denied as? HTTPURLResponse)?.statusCode == 401)
        let (data, allowed) = try await provider([.auth(.bearer("test-token")), .validate()])
            .request(endpoint: PeerEndpoint(baseURL: base, path: "/protected/data.json"))
        #expect((allowed as? HTTPURLResponse)?.statusCode == 200)
        #expect(data.count == 1024)
    }

    @Test func theProtectedLocationWithTokenRefresh() async throws {
        let refreshes = Locked(0)
        let refresher = TokenRefresher(
            token: AuthToken(credential: .bearer("stale-token")),
            refresh: { _, _ in
                refreshes.withLock { $0 += 1 }
                return AuthToken(credential: .bearer("test-token"))
            }
        )
        let chain = provider([.tokenRefresh(refresher), .validate()])
        try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<20 {
                group.addTask {
                    let (data, _) = try await chain.request(
                        endpoint: PeerEndpoint(baseURL: base, path: "/protected/data.json")
                    )
                    return data.count
                }
            }
            for try await count in group { #expect(count == 1024) }
        }
        #expect(refreshes.withLock { $0 } == 1)
    }
}
