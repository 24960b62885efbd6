import Foundation
import NetworkAgent
import NetworkAgentDiskCache
import NetworkAgentTestServer
import NetworkAgentTestSupport
import NetworkAgentTesting
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Redirects through the cache (RFC 9111 §3, §4): the transport follows them, so the cache sees only the final
/// response, and files it under the URL it came from; the redirect itself is cached only when the cache sees it.
@Suite struct DiskCacheRedirectTests {
    /// `/old` redirects to `/new` with `status` and `redirectHeaders`; `/new` is fresh for a minute.
    static func origin(
        status: Int = 302,
        _ redirectHeaders: [(name: String, value: String)] = []
    ) throws
        -> CacheHarness
    {
        try CacheHarness { request, now in
            request.path == "/old"
                ? ServerResponse(
                    status: status,
                    headers: [("Date", httpDate(now)), ("Location", "/new")] + redirectHeaders
                )
                : .cached("new body", at: now, [("Cache-Control", "max-age=60")])
        }
    }

    static func paths(_ cache: CacheHarness) -> [String] {
        cache.server.requests.map(\.path)
    }

    @Test(
        "17.5 the final response of a redirect is stored under the final URL, not the first one",
        arguments: [[], [("Cache-Control", "no-store")]] as [[(name: String, value: String)]]
    )
    func theFinalResponseIsStoredUnderTheFinalURL(_ redirectHeaders: [(name: String, value: String)]) async throws {
        let cache = try Self.origin(redirectHeaders)
        let first = try await cache.send("/old")
        #expect(first.body == "new body")
        #expect(first.response.url?.path == "/new")
        #expect(first.status == .miss)

        // The 302 was not cacheable: asking for /old again goes to the origin.
        let again = try await cache.send("/old")
        #expect(again.status == .miss)
        #expect(again.body == "new body")
        #expect(Self.paths(cache) == ["/old", "/new", "/old", "/new"])

        // The response of /new was stored under /new.
        let direct = try await cache.send("/new")
        #expect(direct.status == .hit)
        #expect(direct.body == "new body")
        #expect(cache.requestCount == 4)
    }

    @Test func aResponseUnderTheRequestsOwnURLIsNoRedirectWhateverItsEscapes() async throws {
        let cache = try CacheHarness { _, now in .cached("escaped", at: now, [("Cache-Control", "max-age=60")]) }
        let endpoint = CacheEndpoint(
            baseURL: cache.server.baseURL,
            path: "/café path/~x",
            task: .requestAttributes(attributes: ["q": "a b&c", "tilde": "~", "plus": "1+1"], encoding: .url)
        )
        for _ in 0..<2 {
            _ = try await cache.recorder.observing { try await cache.provider.request(endpoint: endpoint) }
        }
        #expect(cache.requestCount == 1)
        #expect(cache.plugin.stats.hits == 1)
    }

    @Test("17.5 a stored response whose URL now redirects is not revalidated by the redirect target's 304")
    func aValidationThatIsRedirectedIsNotMergedIntoTheFirstURL() async throws {
        let cache = try CacheHarness { _, now in
            .cached("old body", at: now, [("Cache-Control", "max-age=10"), ("ETag", "\"x\"")])
        }
        _ = try await cache.send("/old")
        cache.clock.advance(by: .seconds(30))
        // /old moved; /new happens to answer the old validator with a 304 about itself.
        cache.respond { request, now in
            if request.path == "/old" {
                return ServerResponse(status: 302, headers: [("Date", httpDate(now)), ("Location", "/new")])
            }
            if request.header("If-None-Match") == "\"x\"" {
                return ServerResponse(status: 304, headers: [("Date", httpDate(now)), ("ETag", "\"x\"")])
            }
            return .cached("new body", at: now, [("Cache-Control", "max-age=60"), ("ETag", "\"x\"")])
        }
        let moved = try await cache.send("/old")
        #expect(moved.body == "new body")
        #expect(moved.status == .miss)
        #expect(moved.response.url?.path == "/new")
        // /old is no longer answered from the store; /new is.
        #expect(try await cache.send("/old").status == .miss)
        #expect(try await cache.send("/new").status == .hit)
    }

    /// A provider on the harness's cache whose transport returns redirects instead of following them.
    static func notFollowing(_ cache: CacheHarness) -> NetworkAgentProvider<CacheEndpoint> {
        NetworkAgentProvider(
            plugins: [cache.plugin],
            agent: NetworkAgent(transport: TestTransport.make(maximumRedirects: 0))
        )
    }

    @Test(
        "17.5 a redirect the cache sees is stored only when cacheable: 301/308 heuristically, 302/307 when fresh",
        arguments: [
            (301, [("Last-Modified", "Tue, 14 Nov 2023 00:00:00 GMT")], true),
            (308, [("Cache-Control", "max-age=600")], true),
            (302, [("Cache-Control", "max-age=600")], true),
            (307, [("Expires", "Tue, 14 Nov 2023 23:13:20 GMT")], true),
            (302, [("Last-Modified", "Tue, 14 Nov 2023 00:00:00 GMT")], false),
            (307, [], false),
            (301, [("Cache-Control", "no-store, max-age=600")], false),
        ] as [(Int, [(name: String, value: String)], Bool)]
    )
    func aRedirectIsStoredOnlyWhenCacheable(
        _ status: Int,
        _ headers: [(name: String, value: String)],
        _ stored: Bool
    ) async throws {
        let cache = try Self.origin(status: status, headers)
        let provider = Self.notFollowing(cache)
        let endpoint = CacheEndpoint(baseURL: cache.server.baseURL, path: "/old")
        let (_, first) = try await provider.request(endpoint: endpoint)
        #expect((first as? HTTPURLResponse)?.statusCode == status)
        let (_, second) = try await provider.request(endpoint: endpoint)
        let http = try #require(second as? HTTPURLResponse)
        #expect(http.statusCode == status)
        #expect(http.value(forHTTPHeaderField: "Location") == "/new")
        #expect(CacheStatus(response: http) == (stored ? .hit : .miss))
        #expect(cache.requestCount == (stored ? 1 : 2))
    }
}
