import Foundation
import NetworkAgent
import NetworkAgentAuth
import NetworkAgentDiskCache
import NetworkAgentGzip
import NetworkAgentLogging
import NetworkAgentMetrics
import NetworkAgentRetry
import NetworkAgentTokenRefresh

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `chain_overhead` and `metrics_overhead`: what plugins cost per request, as request rates against a baseline on
/// the same server, through ``ThroughputComparison``.
@MainActor
enum PluginOverheadScenarios {
    /// `chain_overhead`: every plugin in the recommended order of Docs/Design.md against raw
    /// `URLSession.data(for:)`, both on ``BenchRoutes/noStoreDocument``.
    ///
    /// The route's responses say `Cache-Control: no-store`, so the disk cache does its whole per-request work
    /// (key with a credential fingerprint, lookup, fetch, storability check) and never answers from its store:
    /// every request reaches the server, as the baseline's do. The token is valid, so no refresh happens.
    static func chain(_ context: BenchContext) async throws -> Measurement {
        let server = try await context.server()
        let session = URLSession(configuration: .ephemeral)
        defer { session.finishTasksAndInvalidate() }
        let directory = try scratchDirectory(context, named: "chain-cache")
        defer { try? FileManager.default.removeItem(at: directory) }
        let chain = try FullChain(
            cacheDirectory: directory,
            transport: URLSessionTransport(configuration: .ephemeral)
        )
        var measurement = try await ThroughputComparison.measure(
            context,
            baseline: CoreOverheadScenario.rawGET(server.url(BenchRoutes.noStoreDocument), session: session),
            subject: chain.request(server)
        )
        try chain.verify(requests: ThroughputComparison.requestsPerSide(context.options))
        measurement.note = [FullChain.description, measurement.note].compactMap { $0 }.joined(separator: "; ")
        return measurement
    }

    /// `metrics_overhead`: a provider with only `.metrics(MetricsRegistry())` against a provider without plugins,
    /// both on ``BenchRoutes/plainDocument``.
    static func metrics(_ context: BenchContext) async throws -> Measurement {
        let server = try await context.server()
        let endpoint = BenchEndpoint.get(server.baseURL, path: BenchRoutes.plainDocument)
        let plain = NetworkAgentProvider<BenchEndpoint>(
            agent: NetworkAgent(transport: URLSessionTransport(configuration: .ephemeral))
        )
        let registry = MetricsRegistry()
        let measured = NetworkAgentProvider<BenchEndpoint>(
            plugins: [.metrics(registry)],
            agent: NetworkAgent(transport: URLSessionTransport(configuration: .ephemeral))
        )
        var measurement = try await ThroughputComparison.measure(
            context,
            baseline: CoreOverheadScenario.providerGET(endpoint, plain),
            subject: CoreOverheadScenario.providerGET(endpoint, measured)
        )
        let expected = ThroughputComparison.requestsPerSide(context.options)
        let counted = Int(registry.snapshot().total("networkagent_requests_total", matching: ["outcome": "success"]))
        guard counted == expected else {
            throw BenchFailure("the metrics plugin counted \(counted) successful requests, not \(expected)")
        }
        measurement.note = [
            "baseline: the provider without plugins; the registry counted all \(expected) requests",
            measurement.note,
        ].compactMap { $0 }.joined(separator: "; ")
        return measurement
    }

    /// A new folder in the run's temporary directory, deleted at the end of the run at the latest.
    static func scratchDirectory(_ context: BenchContext, named name: String) throws -> URL {
        let directory = context.temporaryDirectory.appending(path: name)
        try? FileManager.default.removeItem(at: directory)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        Cleanup.add { try? FileManager.default.removeItem(at: directory) }
        return directory
    }
}

/// The provider of `chain_overhead` and `chain_overhead_curl`: every plugin in the recommended order of
/// Docs/Design.md, on the transport given, for GETs of ``BenchRoutes/noStoreDocument``.
///
/// The route's responses say `Cache-Control: no-store`, so the disk cache does its whole per-request work (key with
/// a credential fingerprint, lookup, fetch, storability check) and never answers from its store: every request
/// reaches the server. The token is valid, so no refresh happens.
struct FullChain {
    /// What the row's note says about the chain.
    static let description =
        "metrics, logging (null sink), auth + token refresh (valid token, 0 refreshes), retry, gzip, disk cache, "
        + "validate on /\(BenchRoutes.noStoreDocument) (server sends Cache-Control: no-store: "
        + "every request a miss, 0 entries stored)"

    let provider: NetworkAgentProvider<BenchEndpoint>
    private let registry = MetricsRegistry()
    private let refreshCalls = Locked(0)
    private let cache: DiskCachePlugin

    /// The chain on `transport`, its disk cache in `cacheDirectory`.
    init(cacheDirectory: URL, transport: any HTTPTransport) throws {
        let cache = try DiskCachePlugin(directory: cacheDirectory)
        let refreshCalls = self.refreshCalls
        let refresher = TokenRefresher(token: AuthToken(credential: .bearer(BenchRoutes.validToken))) { _, _ in
            refreshCalls.withLock { $0 += 1 }
            return AuthToken(credential: .bearer(BenchRoutes.validToken))
        }
        self.cache = cache
        provider = NetworkAgentProvider<BenchEndpoint>(
            plugins: [
                .metrics(registry),
                .logging(sink: LogSink { _ in }),
                .auth(.bearer(BenchRoutes.validToken)),
                .tokenRefresh(refresher),
                .retry(),
                .gzip(),
                cache,
                .validate(),
            ],
            agent: NetworkAgent(transport: transport)
        )
    }

    /// One GET of the no-store document through the chain, checked: the document, and a cache miss.
    func request(_ server: BenchServer) -> @Sendable () async throws -> Void {
        let endpoint = BenchEndpoint.get(server.baseURL, path: BenchRoutes.noStoreDocument)
        let provider = provider
        return {
            let (data, response) = try await provider.request(endpoint: endpoint)
            try BenchRoutes.checkDocument(data, response)
            guard CacheStatus(response: response) == .miss else {
                throw BenchFailure("a no-store response came from the cache (\(response))")
            }
        }
    }

    /// Checks that the chain did what the row says: counted every one of `requests`, never refreshed, stored
    /// nothing.
    func verify(requests expected: Int) throws {
        let counted = Int(registry.snapshot().total("networkagent_requests_total", matching: ["outcome": "success"]))
        guard counted == expected else {
            throw BenchFailure("the metrics plugin counted \(counted) successful requests, not \(expected)")
        }
        let refreshes = refreshCalls.withLock { $0 }
        guard refreshes == 0 else { throw BenchFailure("the valid token was refreshed \(refreshes) times") }
        let stats = cache.stats
        guard stats.entryCount == 0 else { throw BenchFailure("the cache stored \(stats.entryCount) no-store answers") }
    }
}
