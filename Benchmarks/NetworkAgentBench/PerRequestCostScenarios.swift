import CMallocCounter
import Foundation
import NetworkAgent
import NetworkAgentAuth
import NetworkAgentCurl
import NetworkAgentDiskCache
import NetworkAgentGzip
import NetworkAgentLogging
import NetworkAgentMetrics
import NetworkAgentRetry
import NetworkAgentTokenRefresh

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What one request costs in client CPU (issue 29): `plugin_cost_<plugin>`, `concurrency_scale` and
/// `allocations_per_request`, all on `CurlTransport`, where our own code is most of a request's CPU.
@MainActor
enum PerRequestCostScenarios {
    /// One `plugin_cost_<name>` row: the plugin alone on `CurlTransport` against the provider without plugins.
    struct PluginCase: Sendable {
        /// The row's name after `plugin_cost_`.
        let name: String
        /// What the subject is, for `--list`.
        let summary: String
        /// The most µs of CPU per request the plugin may add.
        let goal: Double
        /// Builds the subject: a provider with the plugin and the check of one answer.
        let make: @MainActor @Sendable (BenchContext, BenchServer, CurlTransport) throws -> Subject
    }

    /// A provider under measurement, how to send one checked request through it, and the check after the run.
    struct Subject {
        let request: @Sendable () async throws -> Void
        /// Checks what the plugin did over `requests` requests (counted, refreshed, stored); throws otherwise.
        var verify: (_ requests: Int) throws -> Void = { _ in }
        /// The route the baseline fetches (the same document, so only the plugin differs).
        var baselineRoute: String = BenchRoutes.plainDocument
        /// Whether each request asks for a URL of its own (`?n=<number>`), baseline too.
        var uniqueURLs = false
        var note: String
    }

    /// The plugins measured alone, with the goals of issue 29.
    nonisolated static let plugins: [PluginCase] = [
        PluginCase(name: "auth", summary: "auth with a bearer token", goal: 3) { _, server, transport in
            Subject(
                request: checkedGET(
                    server,
                    transport,
                    BenchRoutes.protectedDocument,
                    plugins: [.auth(.bearer(BenchRoutes.validToken))]
                ),
                note: "auth(.bearer) on the protected route (401 without the token)"
            )
        },
        PluginCase(name: "retry", summary: "retry with its default policy (no retry happens)", goal: 3) {
            _,
            server,
            transport in
            Subject(
                request: checkedGET(server, transport, BenchRoutes.plainDocument, plugins: [.retry()]),
                note: "retry()"
            )
        },
        PluginCase(name: "gzip", summary: "gzip (the document is not gzipped)", goal: 3) { _, server, transport in
            Subject(
                request: checkedGET(server, transport, BenchRoutes.plainDocument, plugins: [.gzip()]),
                note: "gzip()"
            )
        },
        PluginCase(name: "metrics", summary: "metrics into a registry", goal: 3) { context, server, transport in
            let registry = MetricsRegistry()
            return Subject(
                request: checkedGET(server, transport, BenchRoutes.plainDocument, plugins: [.metrics(registry)]),
                verify: { expected in
                    let counted = Int(
                        registry.snapshot().total("networkagent_requests_total", matching: ["outcome": "success"])
                    )
                    guard counted == expected else {
                        throw BenchFailure("the metrics plugin counted \(counted) successful requests, not \(expected)")
                    }
                },
                note: "metrics(registry), every request counted"
            )
        },
        PluginCase(name: "token_refresh", summary: "token refresh with a valid token (0 refreshes)", goal: 3) {
            _,
            server,
            transport in
            let refreshes = Locked(0)
            let refresher = TokenRefresher(token: AuthToken(credential: .bearer(BenchRoutes.validToken))) { _, _ in
                refreshes.withLock { $0 += 1 }
                return AuthToken(credential: .bearer(BenchRoutes.validToken))
            }
            return Subject(
                request: checkedGET(
                    server,
                    transport,
                    BenchRoutes.protectedDocument,
                    plugins: [.tokenRefresh(refresher)]
                ),
                verify: { _ in
                    let count = refreshes.withLock { $0 }
                    guard count == 0 else { throw BenchFailure("the valid token was refreshed \(count) times") }
                },
                note: "tokenRefresh on the protected route, valid token, 0 refreshes"
            )
        },
        PluginCase(
            name: "logging_drop",
            summary: "logging at its default level to a sink that keeps errors only (drops every record of a "
                + "successful call)",
            goal: 3
        ) { _, server, transport in
            let sink = LogSink(minimumSeverity: .error) { _ in }
            return Subject(
                request: checkedGET(server, transport, BenchRoutes.plainDocument, plugins: [.logging(sink: sink)]),
                note: "logging(.basic) to LogSink(minimumSeverity: .error) { _ in }, which drops every record of a "
                    + "successful call"
            )
        },
        PluginCase(
            name: "logging_keep",
            summary: "logging at its default level, the sink keeping a line per request",
            goal: 15
        ) {
            _,
            server,
            transport in
            let kept = Locked((lines: 0, bytes: 0))
            let sink = LogSink { record in
                guard record.kind == .response else { return }
                let line = record.message
                kept.withLock {
                    $0.lines += 1
                    $0.bytes += line.utf8.count
                }
            }
            return Subject(
                request: checkedGET(server, transport, BenchRoutes.plainDocument, plugins: [.logging(sink: sink)]),
                verify: { expected in
                    let lines = kept.withLock { $0.lines }
                    guard lines == expected else { throw BenchFailure("the sink kept \(lines) lines, not \(expected)") }
                },
                note: "logging(.basic), the sink keeping each response line (its text counted)"
            )
        },
        PluginCase(name: "disk_cache_no_store", summary: "disk cache on a no-store miss (nothing stored)", goal: 5) {
            context,
            server,
            transport in
            let directory = try PluginOverheadScenarios.scratchDirectory(context, named: "cost-no-store")
            let cache = try DiskCachePlugin(directory: directory)
            return Subject(
                request: checkedGET(server, transport, BenchRoutes.noStoreDocument, plugins: [cache], expectMiss: true),
                verify: { _ in
                    guard cache.stats.entryCount == 0 else {
                        throw BenchFailure("the cache stored \(cache.stats.entryCount) no-store answers")
                    }
                },
                baselineRoute: BenchRoutes.noStoreDocument,
                note: "disk cache on /\(BenchRoutes.noStoreDocument), every request a miss, 0 entries stored"
            )
        },
        PluginCase(
            name: "disk_cache_store",
            summary: "disk cache on a storable miss (one file written per request)",
            goal: 30
        ) {
            context,
            server,
            transport in
            let directory = try PluginOverheadScenarios.scratchDirectory(context, named: "cost-store")
            let cache = try DiskCachePlugin(directory: directory, maximumBytes: 1 << 30)
            return Subject(
                request: checkedGET(
                    server,
                    transport,
                    BenchRoutes.cacheableDocument,
                    plugins: [cache],
                    expectMiss: true,
                    unique: true
                ),
                verify: { expected in
                    guard cache.stats.entryCount == expected else {
                        throw BenchFailure("the cache stored \(cache.stats.entryCount) entries, not \(expected)")
                    }
                },
                baselineRoute: BenchRoutes.cacheableDocument,
                uniqueURLs: true,
                note: "disk cache on /\(BenchRoutes.cacheableDocument)?n=<unique> (max-age=3600), every request a miss "
                    + "stored as a file"
            )
        },
    ]

    /// The scenario rows of ``plugins``.
    nonisolated static var pluginScenarios: [Scenario] {
        plugins.map { plugin in
            Scenario(
                name: "plugin_cost_\(plugin.name)",
                summary: "client CPU per request \(plugin.summary) adds to the provider without plugins, both on "
                    + "CurlTransport, 1 KiB GETs at 32",
                unit: "us",
                goal: .valueAtMost(plugin.goal, unit: "us"),
                usesServer: true,
                availability: .ready { context in try await pluginCost(plugin, context) }
            )
        }
    }

    /// A request counter shared by the requests of one side, for ``Subject/uniqueURLs``.
    private final class Serial: Sendable {
        private let next = Locked(0)
        func claim() -> Int {
            next.withLock { value in
                defer { value += 1 }
                return value
            }
        }
    }

    /// One GET of `route` through a provider with `plugins` on a new `CurlTransport`, checked (and checked to be a
    /// cache miss when `expectMiss`); with `unique`, each request's URL has a query of its own.
    private static func checkedGET(
        _ server: BenchServer,
        _ transport: CurlTransport,
        _ route: String,
        plugins: [any NetworkAgentPlugin],
        expectMiss: Bool = false,
        unique: Bool = false
    ) -> @Sendable () async throws -> Void {
        let provider = NetworkAgentProvider<BenchEndpoint>(
            plugins: plugins,
            agent: NetworkAgent(transport: transport)
        )
        let base = server.baseURL
        let serial = Serial()
        let fixed = BenchEndpoint.get(base, path: route)
        return {
            let endpoint = unique ? BenchEndpoint.get(base, path: route, query: ["n": "\(serial.claim())"]) : fixed
            let (data, response) = try await provider.request(endpoint: endpoint)
            try BenchRoutes.checkDocument(data, response)
            if expectMiss, CacheStatus(response: response) != .miss {
                throw BenchFailure("expected a cache miss, got \(response)")
            }
        }
    }

    /// `plugin_cost_<name>`: the plugin alone against the provider without plugins, both on `CurlTransport`.
    static func pluginCost(_ plugin: PluginCase, _ context: BenchContext) async throws -> Measurement {
        let server = try await context.server()
        // One transport for both sides: the same engine thread and connections, so only the plugin differs.
        let transport = CurlTransport()
        let subject = try plugin.make(context, server, transport)
        let baseline = checkedGET(server, transport, subject.baselineRoute, plugins: [], unique: subject.uniqueURLs)
        let requests =
            context.options.repetitions * ThroughputComparison.curlRequestsPerRepetition(quick: context.options.quick)
        var (measurement, sent) = try await ThroughputComparison.measureCPUAdded(
            context,
            requests: requests,
            baseline: baseline,
            subject: subject.request
        )
        try subject.verify(sent)
        measurement.note = [
            "value: client CPU per request with \(subject.note) minus without, on one CurlTransport (median of the "
                + "pairs' differences, us); baseline: the provider without plugins' CPU per request",
            measurement.note,
        ].compactMap { $0 }.joined(separator: "; ")
        return measurement
    }

    // MARK: - concurrency_scale

    /// The requests in flight of `concurrency_scale`'s subject: 16 times the transport's connections per host.
    static let manyInFlight = 1_024

    /// `concurrency_scale`: CPU per request of the provider on `CurlTransport` at 1,024 requests in flight against
    /// the same at 32, on one transport (64 connections per host): a request waiting for a connection must cost
    /// nothing while it waits.
    static func concurrencyScale(_ context: BenchContext) async throws -> Measurement {
        let server = try await context.server()
        let request = checkedGET(server, CurlTransport(), BenchRoutes.plainDocument, plugins: [])
        let few = ThroughputComparison.concurrency
        let many = manyInFlight
        let measured = try await ThroughputComparison.measureRuns(
            context,
            requests: ThroughputComparison.curlRequestsPerRepetition(quick: context.options.quick),
            baseline: { total in try await LoadGenerator.requestsPerSecond(total: total, concurrency: few, request) },
            subject: { total in try await LoadGenerator.requestsPerSecond(total: total, concurrency: many, request) }
        )
        guard var measurement = measured.byCPU(.subjectOverBaseline) else { return .unavailable("no CPU figures") }
        measurement.note =
            "client CPU per request (us) of the provider without plugins on one CurlTransport (default "
            + "\(CurlTransport.Configuration.defaultMaximumConnectionsPerHost) connections per host): subject "
            + "\(many) in flight, baseline \(few); ratio subject / baseline; "
            + (measurement.note ?? "")
        return measurement
    }

    // MARK: - allocations_per_request

    /// `allocations_per_request` (reported): heap allocations per request of the full chain on a miss (value)
    /// and of the provider without plugins (baseline), both on `CurlTransport`, 32 in flight; the raw libcurl loop's
    /// in the note. Counted by the bench's own allocator shim (`CMallocCounter`).
    static func allocations(_ context: BenchContext) async throws -> Measurement {
        guard malloc_counter_available() else {
            return .notRun("allocations are not counted in a sanitizer build")
        }
        let server = try await context.server()
        let directory = try PluginOverheadScenarios.scratchDirectory(context, named: "allocations-cache")
        defer { try? FileManager.default.removeItem(at: directory) }
        let chain = try FullChain(cacheDirectory: directory, transport: CurlTransport())
        let bare = checkedGET(server, CurlTransport(), BenchRoutes.noStoreDocument, plugins: [])
        let raw = try RawCurlLoop(
            url: server.url(BenchRoutes.noStoreDocument),
            concurrency: ThroughputComparison.concurrency,
            expectedBytes: BenchRoutes.documentSize
        )
        let requests = context.options.quick ? 2_000 : 10_000
        let concurrency = ThroughputComparison.concurrency
        func perRequest(_ run: () async throws -> Void) async throws -> Double {
            try await run()  // warm-up: connections, caches, first-use allocations
            malloc_counter_start()
            do {
                try await run()
            } catch {
                _ = malloc_counter_stop()
                throw error
            }
            return Double(malloc_counter_stop()) / Double(requests)
        }
        var chainCounts: [Double] = []
        var bareCounts: [Double] = []
        var rawCounts: [Double] = []
        let chainRequest = chain.request(server)
        for _ in 0..<context.options.repetitions {
            bareCounts.append(
                try await perRequest {
                    _ = try await LoadGenerator.requestsPerSecond(total: requests, concurrency: concurrency, bare)
                }
            )
            chainCounts.append(
                try await perRequest {
                    _ = try await LoadGenerator.requestsPerSecond(
                        total: requests,
                        concurrency: concurrency,
                        chainRequest
                    )
                }
            )
            rawCounts.append(try await perRequest { _ = try await raw.requestsPerSecond(total: requests) })
        }
        var measurement = Measurement(baseline: bareCounts, subject: chainCounts)
        measurement.figures["raw_libcurl"] = rawCounts
        measurement.note = String(
            format: "heap allocations (malloc, calloc, realloc, aligned) per request in the whole process, %d "
                + "requests per repetition, %d in flight, after a warm-up run; value: the full chain on a no-store "
                + "miss (%@); baseline: the provider without plugins; the raw libcurl loop: %.1f",
            requests,
            concurrency,
            FullChain.description,
            rawCounts.median ?? 0
        )
        return measurement
    }
}
