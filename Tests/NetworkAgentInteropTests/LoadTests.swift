import Foundation
import NetworkAgent
import NetworkAgentAuth
import NetworkAgentDiskCache
import NetworkAgentGzip
import NetworkAgentLogging
import NetworkAgentMetrics
import NetworkAgentTestServer
import NetworkAgentTestSupport
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// 10,000 requests at 64 concurrent through the full chain against the loopback server: no failure, and no memory
/// growth beyond what FoundationNetworking itself shows.
///
/// FoundationNetworking's resident memory grows with every request on its own — plain `URLSession.data(for:)` on a
/// fresh session per round, measured here: about 6 kB per request at first, still about 2.5 kB per request after
/// 28,000 requests — so "flat" cannot be asked of any client built on it. The test alternates rounds of raw
/// URLSession requests and full-chain requests in one process and checks that the chain's rounds grow no more than
/// the raw rounds do. Memory is read for the whole process, so this runs only in the pass of its own that
/// `Scripts/test` starts with `NETWORKAGENT_MEMORY_TESTS=1` (in the shared pass it is reported as skipped). It
/// compares against raw URLSession, so the chain runs on URLSessionTransport whatever `TestTransport.kind` is.
@Suite(.serialized) struct LoadTests {
    /// Runs `count` calls of `call`, 64 at a time; returns how many failed.
    static func load(_ count: Int, _ call: @escaping @Sendable (Int) async -> Bool) async -> Int {
        await withTaskGroup(of: Bool.self) { group in
            var next = 0
            func enqueue() {
                guard next < count else { return }
                let index = next
                next += 1
                group.addTask { await call(index) }
            }
            for _ in 0..<64 { enqueue() }
            var failed = 0
            while let succeeded = await group.next() {
                if !succeeded { failed += 1 }
                enqueue()
            }
            return failed
        }
    }

    @Test(
        .enabled(if: Memory.isolated, "runs alone with NETWORKAGENT_MEMORY_TESTS=1 (Scripts/test does)"),
        .timeLimit(.minutes(5))
    )
    func fullChainLoadMemoryBound() async throws {
        let payload = Data(String(repeating: "{\"name\":\"pikachu\",\"type\":\"electric\"},", count: 30).utf8)
        let server = try LoopbackServer { request in
            request.header("Authorization") == "Bearer load"
                ? .json(payload, headers: [("Cache-Control", "no-store")])
                : .text("who are you", status: 401)
        }
        let cacheDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("load-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: cacheDirectory) }
        let metrics = MetricsRegistry()
        let provider = NetworkAgentProvider<PeerEndpoint>(
            plugins: [
                .metrics(metrics),
                .logging(.basic, sink: LogSink { _ in }),
                .auth(.bearer("load")),
                .gzip(),
                try .diskCache(directory: cacheDirectory),
                .validate(),
            ],
            agent: NetworkAgent(transport: URLSessionTransport())
        )
        let session = URLSession(configuration: .ephemeral)
        defer { session.finishTasksAndInvalidate() }
        let rounds = 5
        let perRound = 2_000
        var chainGrowth = 0
        var rawGrowth = 0
        var failures = 0
        var served = 0
        for round in 0..<rounds {
            var before = try #require(Memory.kilobytes("VmRSS"))
            failures += await Self.load(perRound) { index in
                let endpoint = PeerEndpoint(baseURL: server.baseURL, path: "/item/\(round)/\(index % 100)")
                return (try? await provider.request(endpoint: endpoint).data) == payload
            }
            var after = try #require(Memory.kilobytes("VmRSS"))
            if round > 0 { chainGrowth += after - before }

            before = after
            _ = await Self.load(perRound) { index in
                var request = URLRequest(url: server.baseURL.appendingPathComponent("raw/\(index % 100)"))
                request.setValue("Bearer load", forHTTPHeaderField: "Authorization")
                return (try? await session.data(for: request).0) == payload
            }
            after = try #require(Memory.kilobytes("VmRSS"))
            if round > 0 { rawGrowth += after - before }
            // The server records every request; count them and forget them, so its memory is not measured.
            served += server.requestCount
            server.resetRecording()
        }
        #expect(failures == 0)
        #expect(served == 2 * rounds * perRound)
        #expect(metrics.inFlight == 0)
        // Round 1 warms up (connection pools, the cache's index, allocator arenas) and is left out.
        #expect(
            chainGrowth <= rawGrowth + 8 * 1024,
            "the chain grew \(chainGrowth) kB over \((rounds - 1) * perRound) requests, raw URLSession \(rawGrowth) kB"
        )
    }
}
