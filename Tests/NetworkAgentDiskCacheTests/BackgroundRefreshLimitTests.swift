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

/// The `stale-while-revalidate` refresh is sent within the endpoint's response limit
/// (`NetworkAgentEndpoint.maximumResponseBytes`), like the call that started it, not within the agent's.
@Suite struct BackgroundRefreshLimitTests {
    /// An endpoint with its own response limit.
    struct LimitedEndpoint: NetworkAgentEndpoint {
        var baseURL: URL
        var path = "/resource"
        var method = HTTPMethod.get
        var headers: [String: String] = ["Accept": "text/plain"]
        var task = HTTPTask.requestPlain
        var timeout: Duration? = .seconds(10)
        var maximumResponseBytes: Int?
    }

    static let directives = "max-age=10, stale-while-revalidate=100"

    /// Stores a short `v1`, then lets it go stale and serves the given body to the background refresh.
    func refresh(
        agentLimit: Int,
        endpointLimit: Int,
        refreshedBody: String
    ) async throws -> (cache: CacheHarness, provider: NetworkAgentProvider<LimitedEndpoint>, endpoint: LimitedEndpoint)
    {
        let cache = try CacheHarness { _, now in .cached("v1", at: now, [("Cache-Control", Self.directives)]) }
        let agent = TestTransport.agent(configuration: NetworkAgentConfiguration(maximumResponseBytes: agentLimit))
        let provider = NetworkAgentProvider<LimitedEndpoint>(plugins: [cache.plugin], agent: agent)
        let endpoint = LimitedEndpoint(baseURL: cache.server.baseURL, maximumResponseBytes: endpointLimit)
        _ = try await provider.request(endpoint: endpoint)
        cache.clock.advance(by: .seconds(30))
        cache.respond { _, now in .cached(refreshedBody, at: now, [("Cache-Control", Self.directives)]) }
        // Observed, so the background refresh reports to the harness's event log too.
        let (data, response) = try await cache.recorder.observing { try await provider.request(endpoint: endpoint) }
        #expect(String(decoding: data, as: UTF8.self) == "v1")
        #expect(CacheStatus(response: response) == .stale)
        #expect(await eventually { cache.requestCount == 2 })
        return (cache, provider, endpoint)
    }

    @Test func anEndpointAllowingMoreThanTheAgentGetsItsLargeRefreshStored() async throws {
        let large = String(repeating: "x", count: 4_096)
        let (cache, provider, endpoint) = try await refresh(
            agentLimit: 64,
            endpointLimit: 1 << 20,
            refreshedBody: large
        )
        #expect(await eventually { cache.plugin.stats.stored == 2 })
        let (data, response) = try await provider.request(endpoint: endpoint)
        #expect(CacheStatus(response: response) == .hit)
        #expect(data.count == 4_096)
        #expect(cache.requestCount == 2)
    }

    @Test func anEndpointAllowingLessThanTheAgentHasItsLimitKeptByTheRefresh() async throws {
        let large = String(repeating: "x", count: 4_096)
        let (cache, _, _) = try await refresh(agentLimit: 1 << 20, endpointLimit: 64, refreshedBody: large)
        // The refresh fails with responseTooLarge (a cache.error event) and the stale entry stays.
        #expect(await eventually { cache.plugin.stats.errors == 1 })
        #expect(cache.plugin.stats.stored == 1)
    }
}
