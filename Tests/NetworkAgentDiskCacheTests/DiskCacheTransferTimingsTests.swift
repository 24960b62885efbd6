import Foundation
import NetworkAgent
import NetworkAgentDiskCache
import NetworkAgentTestServer
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

/// Over the wire: a miss keeps the timings CurlTransport measured for that transfer; a hit has none.
@Suite struct DiskCacheTransferTimingsOverTheWireTests {
    @Test(.enabled(if: TestTransport.kind == .curl, "URLSessionTransport measures no transfer timings on Linux"))
    func aMissKeepsCurlTransportsTimingsAndAHitHasNone() async throws {
        // The server waits 200 ms before answering: the first byte of the real transfer came after that.
        let delay = Duration.milliseconds(200)
        let server = try LoopbackServer { _ in
            ServerResponse(
                headers: [("Content-Type", "text/plain"), ("Cache-Control", "max-age=60")],
                body: .data(Data("fresh".utf8)),
                delay: delay
            )
        }
        defer { server.stop() }
        let provider = NetworkAgentProvider<CacheEndpoint>(
            plugins: [DiskCachePlugin(store: MemoryStore())],
            agent: NetworkAgent(transport: TestTransport.make())
        )
        let endpoint = CacheEndpoint(baseURL: server.baseURL, path: "/r")
        let miss = try #require(try await provider.request(endpoint: endpoint).response as? HTTPURLResponse)
        #expect(CacheStatus(response: miss) == .miss)
        let timings = try #require(miss.transferTimings, "the cache's network answer lost the transfer's timings")
        let firstByte = try #require(timings.firstByte)
        let total = try #require(timings.total)
        #expect(firstByte >= delay, "first byte after \(firstByte), before the server's \(delay) delay")
        #expect(firstByte <= total)
        #expect(timings.connect != nil)
        let hit = try #require(try await provider.request(endpoint: endpoint).response as? HTTPURLResponse)
        #expect(CacheStatus(response: hit) == .hit)
        #expect(hit.transferTimings == nil)
        #expect(server.requestCount == 1)
    }
}
