import Foundation
import NetworkAgent
import NetworkAgentDiskCache
import NetworkAgentTestSupport
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A network answer the cache annotates with its status header keeps the transport's per-phase timings, so an
/// outer metrics plugin still records them.
@Suite struct DiskCacheTransferTimingsTests {
    @Test func aMissKeepsTheTimingsAndAHitHasNone() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let timings = HTTPTransferTimings(connect: .microseconds(80), firstByte: .milliseconds(1))
        let plugin = try DiskCachePlugin(directory: directory.url)
        let provider = NetworkAgentProvider<CacheEndpoint>(
            plugins: [plugin],
            agent: NetworkAgent(
                transport: TimedTransport(
                    timings: timings,
                    headers: ["Cache-Control": "max-age=60", "Content-Type": "text/plain"],
                    body: Data("fresh".utf8)
                )
            )
        )
        let endpoint = CacheEndpoint(baseURL: try #require(URL(string: "http://origin.test")), path: "/r")
        let miss = try #require(try await provider.request(endpoint: endpoint).response as? HTTPURLResponse)
        #expect(CacheStatus(response: miss) == .miss)
        #expect(miss.transferTimings == timings)
        // Answered from the store: nothing was transferred, so no timings.
        let hit = try #require(try await provider.request(endpoint: endpoint).response as? HTTPURLResponse)
        #expect(CacheStatus(response: hit) == .hit)
        #expect(hit.transferTimings == nil)
    }
}
