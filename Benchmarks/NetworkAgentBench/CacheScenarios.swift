import Foundation
import NetworkAgent
import NetworkAgentCurl
import NetworkAgentDiskCache
import NetworkAgentToolSupport

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `cache_hit`, `cache_hit_curl` and `cache_scale`: fresh hits of the disk cache (a ``DiskStore`` in the run's temporary folder)
/// through a provider whose only plugin is the cache.
@MainActor
enum CacheScenarios {
    /// `cache_hit`: hits per second of ``BenchRoutes/cacheableDocument`` (`Cache-Control: max-age=3600`), stored
    /// by one network fetch first, against fetches of the same document through a provider without plugins;
    /// 32 in flight on both sides (``ThroughputComparison``). Every hit is checked to be one, and the cached
    /// provider's transport to have been called only for the first fetch.
    static func hit(_ context: BenchContext) async throws -> Measurement {
        try await hit(context, over: "URLSessionTransport") { URLSessionTransport(configuration: .ephemeral) }
    }

    /// `cache_hit_curl`: as `cache_hit`, with both sides on `CurlTransport`, the fastest transport of the package:
    /// whether a disk hit still beats a fetch once the network path is fast (issue 20, goal ≥ 1.5).
    static func hitCurl(_ context: BenchContext) async throws -> Measurement {
        try await hit(context, over: "CurlTransport") { CurlTransport() }
    }

    private static func hit(
        _ context: BenchContext,
        over transportName: String,
        makeTransport: () -> any HTTPTransport
    ) async throws -> Measurement {
        let server = try await context.server()
        let directory = try PluginOverheadScenarios.scratchDirectory(context, named: "cache-hit")
        defer { try? FileManager.default.removeItem(at: directory) }
        let cache = try DiskCachePlugin(directory: directory)
        let transport = CountingTransport(forwardingTo: makeTransport())
        let cached = NetworkAgentProvider<BenchEndpoint>(plugins: [cache], agent: NetworkAgent(transport: transport))
        let network = NetworkAgentProvider<BenchEndpoint>(agent: NetworkAgent(transport: makeTransport()))
        let endpoint = BenchEndpoint.get(server.baseURL, path: BenchRoutes.cacheableDocument)

        let (data, response) = try await cached.request(endpoint: endpoint)
        try BenchRoutes.checkDocument(data, response)
        guard CacheStatus(response: response) == .miss, cache.stats.entryCount == 1 else {
            throw BenchFailure("the first fetch of /\(BenchRoutes.cacheableDocument) was not stored: \(cache.stats)")
        }
        var measurement = try await ThroughputComparison.measure(
            context,
            baseline: CoreOverheadScenario.providerGET(endpoint, network),
            subject: freshHit(endpoint, cached)
        )
        guard transport.calls == 1 else {
            throw BenchFailure("the cached provider went to the network \(transport.calls) times, not once")
        }
        measurement.note = [
            "baseline: network fetches through a provider without plugins on \(transportName); subject: fresh hits "
                + "of a DiskStore holding the one entry (1 network fetch to store it, 0 during the measurement)",
            measurement.note,
        ].compactMap { $0 }.joined(separator: "; ")
        return measurement
    }

    /// One GET of `endpoint` through `provider`, checked to be the document and a fresh hit.
    private static func freshHit(
        _ endpoint: BenchEndpoint,
        _ provider: NetworkAgentProvider<BenchEndpoint>
    ) -> @Sendable () async throws -> Void {
        {
            let (data, response) = try await provider.request(endpoint: endpoint)
            try BenchRoutes.checkDocument(data, response)
            guard CacheStatus(response: response) == .hit else {
                throw BenchFailure("expected a fresh hit, got \(response)")
            }
        }
    }

    /// The number of entries in the large store: 100,000 (20,000 in quick mode, where filling 100,000 takes
    /// too long).
    static func largeStoreEntries(quick: Bool) -> Int {
        quick ? 20_000 : 100_000
    }

    /// The number of entries in the small store: 1,000.
    static let smallStoreEntries = 1_000

    /// The hits timed per repetition and store: 10,000 (2,000 in quick mode), after 500 untimed ones.
    static func hitsPerRepetition(quick: Bool) -> Int {
        quick ? 2_000 : 10_000
    }

    /// `cache_scale`: the median latency of fresh hits, one at a time, of random entries of a store holding
    /// ``largeStoreEntries(quick:)`` entries against one holding ``smallStoreEntries``.
    ///
    /// Both stores are filled directly through ``DiskStore/store(_:retention:)`` with the entries a fetch of the
    /// document would have stored (filling 100,000 through HTTP would take minutes). The providers' transport
    /// fails every call: a single request reaching it fails the scenario.
    static func scale(_ context: BenchContext) async throws -> Measurement {
        let quick = context.options.quick
        let large = largeStoreEntries(quick: quick)
        let transport = CountingTransport(forwardingTo: nil)
        let agent = NetworkAgent(transport: transport)
        let baseURL = URL(string: "http://cache-scale.invalid")
        guard let baseURL else { throw BenchFailure("bad base URL") }

        let smallStore = try await filledStore(context, named: "cache-scale-1k", entries: smallStoreEntries, baseURL)
        defer { try? FileManager.default.removeItem(at: smallStore.directory) }
        let largeStore = try await filledStore(context, named: "cache-scale-large", entries: large, baseURL)
        defer { try? FileManager.default.removeItem(at: largeStore.directory) }
        let small = NetworkAgentProvider<BenchEndpoint>(plugins: [.cache(store: smallStore)], agent: agent)
        let big = NetworkAgentProvider<BenchEndpoint>(plugins: [.cache(store: largeStore)], agent: agent)

        let hits = hitsPerRepetition(quick: quick)
        var random = SplitMix64(seed: 11)
        _ = try await medianHitMicroseconds(small, baseURL, entries: smallStoreEntries, hits: 500, &random)
        _ = try await medianHitMicroseconds(big, baseURL, entries: large, hits: 500, &random)
        var measurement = try await Repetitions.interleaved(
            context.options.repetitions,
            baseline: {
                try await medianHitMicroseconds(small, baseURL, entries: smallStoreEntries, hits: hits, &random)
            },
            subject: { try await medianHitMicroseconds(big, baseURL, entries: large, hits: hits, &random) }
        )
        guard transport.calls == 0 else {
            throw BenchFailure("a cache hit went to the transport (\(transport.calls) calls)")
        }
        let label = large == 100_000 ? "100k" : "\(large / 1_000)k (quick mode; the full run uses 100k)"
        measurement.note =
            "\(label) vs 1k entries of 1 KiB in a DiskStore, filled through DiskStore.store; median of \(hits) "
            + "sequential hits of random entries per repetition and store, through a provider with only the cache; "
            + "the transport fails if called (0 calls)"
        return measurement
    }

    /// A ``DiskStore`` in a new folder holding `entries` fresh entries of the 1 KiB document, at
    /// `baseURL/entries/<n>.json`.
    private static func filledStore(
        _ context: BenchContext,
        named name: String,
        entries: Int,
        _ baseURL: URL
    ) async throws -> DiskStore {
        let directory = try PluginOverheadScenarios.scratchDirectory(context, named: name)
        let store = try DiskStore(directory: directory, maximumBytes: 1 << 30)
        let agent = NetworkAgent(transport: CountingTransport(forwardingTo: nil))
        let clock = ContinuousClock()
        let start = clock.now
        let now = Date()
        let retention = EntryRetention(freshFor: .seconds(86_400), staleFor: .zero, hasValidator: false)
        for number in 0..<entries {
            let request = try agent.urlRequest(for: entryEndpoint(baseURL, number))
            guard let key = CacheKey(request: request), let url = request.url else {
                throw BenchFailure("no cache key for \(request)")
            }
            let entry = CachedEntry(
                key: key,
                responseURL: url,
                statusCode: 200,
                headers: [
                    "Content-Type": "application/json",
                    "Content-Length": String(BenchRoutes.documentSize),
                    "Cache-Control": "max-age=86400",
                ],
                body: BenchRoutes.document,
                requestDate: now,
                responseDate: now
            )
            try store.store(entry, retention: retention)
            if number.isMultiple(of: 1_000) { await Task.yield() }
        }
        guard store.usage.entryCount == entries else {
            throw BenchFailure("the store holds \(store.usage.entryCount) entries, not \(entries)")
        }
        log(String(format: "filled %@ with %d entries in %.1f s", name, entries, start.duration(to: clock.now).seconds))
        return store
    }

    /// The endpoint of entry `number`.
    private static func entryEndpoint(_ baseURL: URL, _ number: Int) -> BenchEndpoint {
        BenchEndpoint.get(baseURL, path: "entries/\(number).json")
    }

    /// Times `hits` fresh hits of random entries, one after another, and returns the median in microseconds.
    private static func medianHitMicroseconds(
        _ provider: NetworkAgentProvider<BenchEndpoint>,
        _ baseURL: URL,
        entries: Int,
        hits: Int,
        _ random: inout SplitMix64
    ) async throws -> Double {
        let endpoints = (0..<hits).map { _ in entryEndpoint(baseURL, Int(random.next() % UInt64(entries))) }
        let clock = ContinuousClock()
        var latencies: [Double] = []
        latencies.reserveCapacity(hits)
        for endpoint in endpoints {
            let start = clock.now
            let (data, response) = try await provider.request(endpoint: endpoint)
            latencies.append(start.duration(to: clock.now).seconds * 1e6)
            guard CacheStatus(response: response) == .hit, data.count == BenchRoutes.documentSize else {
                throw BenchFailure("expected a fresh hit of \(endpoint.path), got \(response)")
            }
        }
        return latencies.median ?? 0
    }
}

/// A transport that counts its calls and forwards them, or fails them when it has nowhere to forward to: the
/// cache scenarios check that hits never reach it.
final class CountingTransport: HTTPTransport {
    private let count = Locked(0)
    private let inner: (any HTTPTransport)?

    init(forwardingTo inner: (any HTTPTransport)?) {
        self.inner = inner
    }

    /// The calls so far.
    var calls: Int {
        count.withLock { $0 }
    }

    func send(_ request: URLRequest) async throws -> (data: Data, response: URLResponse) {
        count.withLock { $0 += 1 }
        guard let inner else {
            throw BenchFailure("the network must not be used here (\(request.url?.absoluteString ?? "no URL"))")
        }
        return try await inner.send(request)
    }
}
