import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One named measurement of the benchmark. Names are fixed so results can be compared over time.
struct Scenario: Sendable {
    /// How a scenario is run.
    enum Availability: Sendable {
        /// Measured by the closure.
        case ready(@MainActor @Sendable (BenchContext) async throws -> Measurement)
        /// Not measurable yet: it needs these products, which are not in this package yet.
        case pending(needs: [String])
    }

    /// The fixed name, e.g. `core_overhead`.
    let name: String
    /// What is measured against what, for `--list` and the docs.
    let summary: String
    /// The unit of the value and the baseline.
    let unit: String
    let goal: Goal
    /// Whether the scenario talks to the HTTP server (which is then started before it runs).
    let usesServer: Bool
    let availability: Availability

    /// Every scenario, in the order they run.
    ///
    /// To wire in a scenario that is pending, replace its `.pending(needs:)` with `.ready { context in ... }`.
    /// A request-rate measurement judged by client CPU per request instead (baseline CPU / subject CPU).
    @MainActor
    private static func byCPU(_ measurement: Measurement) -> Measurement {
        measurement.byCPU(.baselineOverSubject) ?? measurement
    }

    static let all: [Scenario] = beforePluginCosts + PerRequestCostScenarios.pluginScenarios + afterPluginCosts

    /// The scenarios before the `plugin_cost_<plugin>` rows.
    private static let beforePluginCosts: [Scenario] = [
        Scenario(
            name: "core_overhead",
            summary: "provider without plugins, 1 KiB GETs/s at 32 concurrent vs raw URLSession.data(for:)",
            unit: "req/s",
            goal: .ratioAtLeast(0.97),
            usesServer: true,
            availability: .ready(CoreOverheadScenario.run)
        ),
        Scenario(
            name: "chain_overhead",
            summary: "provider with the full chain (logging to a null sink, auth, refresh, retry, gzip, "
                + "cache on a no-store route, metrics) vs raw URLSession",
            unit: "req/s",
            goal: .ratioAtLeast(0.93),
            usesServer: true,
            availability: .ready(PluginOverheadScenarios.chain)
        ),
        Scenario(
            name: "cache_hit",
            summary: "fresh disk-cache hits/s vs network fetches of the same resource through the provider",
            unit: "req/s",
            goal: .ratioAtLeast(20),
            usesServer: true,
            availability: .ready(CacheScenarios.hit)
        ),
        Scenario(
            name: "cache_hit_curl",
            summary: "client CPU per request of network fetches / of fresh disk-cache hits of the same resource, "
                + "both on CurlTransport",
            unit: "us",
            goal: .ratioAtLeast(3),
            usesServer: true,
            availability: .ready { try await byCPU(CacheScenarios.hitCurl($0)) }
        ),
        Scenario(
            name: "cache_scale",
            summary: "disk-cache hit latency with 100k entries (20k quick) vs with 1k entries, no network",
            unit: "us",
            goal: .ratioAtMost(1.5),
            usesServer: false,
            availability: .ready(CacheScenarios.scale)
        ),
        Scenario(
            name: "gzip_inflate",
            summary: "Inflater MB/s on 100 MiB of JSON (16 MiB quick) vs Python's zlib.decompress on the same bytes",
            unit: "MB/s",
            goal: .ratioAtLeast(1.0),
            usesServer: false,
            availability: .ready(GzipScenarios.inflate)
        ),
        Scenario(
            name: "gzip_deflate",
            summary: "Deflater level 6 MB/s on the same JSON vs Python's zlib level 6",
            unit: "MB/s",
            goal: .ratioAtLeast(0.95),
            usesServer: false,
            availability: .ready(GzipScenarios.deflate)
        ),
        Scenario(
            name: "upload_rss",
            summary: "peak RSS growth of a child process uploading a 1 GiB multipart file (256 MiB quick) "
                + "through the provider; baseline: the file size",
            unit: "MB",
            goal: .valueAtMost(64, unit: "MB"),
            usesServer: true,
            availability: .ready(UploadMemoryScenario.run)
        ),
        Scenario(
            name: "refresh_storm",
            summary: "1,000 concurrent requests all hitting 401 on CurlTransport: refresh calls and wall time "
                + "vs the same 2,000 exchanges (1,000 answered 401, 1,000 retried) as plain GETs",
            unit: "ms",
            goal: .ratioAtMost(1.3).and(.count("refresh calls", equals: 1)),
            usesServer: true,
            availability: .ready(RefreshStormScenario.run)
        ),
        Scenario(
            name: "metrics_overhead",
            summary: "provider with only the metrics plugin vs provider without plugins, 1 KiB GETs/s",
            unit: "req/s",
            goal: .ratioAtLeast(0.98),
            usesServer: true,
            availability: .ready(PluginOverheadScenarios.metrics)
        ),
        Scenario(
            name: "redis_cache_hit",
            summary: "fresh hits/s through the cache on a RedisStore vs GETs of the same stored bytes through the "
                + "store's hiredis connections, 32 in flight; not run without Redis",
            unit: "req/s",
            goal: .ratioAtLeast(0.5),
            usesServer: true,
            availability: .ready(RedisScenarios.hit)
        ),
        Scenario(
            name: "redis_coalesce",
            summary: "origin revalidations of one stale entry requested by 4 processes x 50 at once on a shared "
                + "RedisStore; not run without Redis",
            unit: "req",
            goal: .count(RedisScenarios.originRequests, equals: 1),
            usesServer: false,
            availability: .ready(RedisScenarios.coalesce)
        ),
        Scenario(
            name: "miss_coalesce",
            summary: "origin requests for 100 concurrent cold misses of one URL: in one process, and from 4 processes "
                + "x 25 on a shared RedisStore; not run without Redis",
            unit: "req",
            goal: .count(MissCoalesceScenario.inProcess, equals: 1).and(
                .count(MissCoalesceScenario.acrossProcesses, equals: 1)
            ),
            usesServer: false,
            availability: .ready(MissCoalesceScenario.run)
        ),
        Scenario(
            name: "curl_speedup",
            summary: "provider without plugins on CurlTransport vs raw URLSession.data(for:), 1 KiB GETs/s at 32",
            unit: "req/s",
            goal: .ratioAtLeast(10),
            usesServer: true,
            availability: .ready(CurlScenarios.speedup)
        ),
        Scenario(
            name: "curl_cpu_speedup",
            summary: "client CPU per request of raw URLSession.data(for:) / of the provider without plugins on "
                + "CurlTransport, 1 KiB GETs at 32",
            unit: "us",
            goal: .ratioAtLeast(10),
            usesServer: true,
            availability: .ready { try await byCPU(CurlScenarios.speedup($0)) }
        ),
        Scenario(
            name: "curl_overhead",
            summary: "client CPU per request of a raw libcurl multi loop (one thread, 32 easy handles) / of the "
                + "provider without plugins on CurlTransport, 1 KiB GETs at 32",
            unit: "us",
            goal: .ratioAtLeast(0.45),
            usesServer: true,
            availability: .ready { try await byCPU(CurlScenarios.overhead($0)) }
        ),
        Scenario(
            name: "chain_overhead_curl",
            summary: "client CPU per request without plugins / with chain_overhead's full chain, both on "
                + "CurlTransport",
            unit: "us",
            goal: .ratioAtLeast(0.6),
            usesServer: true,
            availability: .ready { try await byCPU(CurlScenarios.chain($0)) }
        ),
    ]

    /// The scenarios after the `plugin_cost_<plugin>` rows.
    private static let afterPluginCosts: [Scenario] = [
        Scenario(
            name: "concurrency_scale",
            summary: "client CPU per request of the provider on CurlTransport at 1,024 in flight / at 32, against "
                + "the same server",
            unit: "us",
            goal: .ratioAtMost(1.1),
            usesServer: true,
            availability: .ready(PerRequestCostScenarios.concurrencyScale)
        ),
        Scenario(
            name: "allocations_per_request",
            summary: "heap allocations per request of the full chain on a miss vs the provider without plugins, "
                + "both on CurlTransport (report only)",
            unit: "allocs",
            goal: .report,
            usesServer: true,
            availability: .ready(PerRequestCostScenarios.allocations)
        ),
        Scenario(
            name: "h2_multiplex",
            summary: "256 GETs in flight over HTTPS: CurlTransport on one HTTP/2 connection vs HTTP/1.1 with the "
                + "default connection limit (report only)",
            unit: "req/s",
            goal: .report,
            usesServer: true,
            availability: .ready(CurlScenarios.multiplex)
        ),
        Scenario(
            name: "gzip_bomb_curl",
            summary: "gzip body inflating to 1 GiB through the gzip plugin limited to 16 MiB, on CurlTransport: "
                + "time to the limit error and RSS growth",
            unit: "ms",
            goal: .valueAtMost(1000, unit: "ms").and(
                .figure(CurlMemoryScenarios.rssGrowth, atMost: 32, unit: "MB")
            ),
            usesServer: false,
            availability: .ready(CurlMemoryScenarios.gzipBomb)
        ),
        Scenario(
            name: "soak_rss",
            summary: "RSS growth over 1,000,000 GETs (200,000 quick) through the provider on CurlTransport, "
                + "32 in flight, after warm-up",
            unit: "MB",
            goal: .valueAtMost(8, unit: "MB"),
            usesServer: true,
            availability: .ready(CurlMemoryScenarios.soak)
        ),
        Scenario(
            name: "overload_amplification",
            summary: "origin requests per call, 64 callers x 10 calls/s against an origin answering 503 to "
                + "everything, retry's default policy: with the default budget vs without (report); with budget and "
                + "circuit breaker once it is open",
            unit: "req/call",
            goal: .valueAtMost(1.2, unit: "req/call").and(
                .figure(ResilienceScenarios.breakerFigure, atMost: 0.05, unit: "req/call")
            ),
            usesServer: false,
            availability: .ready(ResilienceScenarios.amplification)
        ),
        Scenario(
            name: "breaker_recovery",
            summary: "time from the origin healing to the first successful call through an open breaker vs the open "
                + "interval left plus that call's round trip; no call fails after the breaker closed",
            unit: "ms",
            goal: .ratioAtMost(1.0).and(.count("failures after close", equals: 0)),
            usesServer: false,
            availability: .ready(ResilienceScenarios.recovery)
        ),
        Scenario(
            name: "breaker_overhead",
            summary: "CPU per request a closed circuit breaker adds (with - without, on a transport that answers "
                + "at once); the same A/B on CurlTransport against the bench server in the note",
            unit: "us",
            goal: .valueAtMost(2, unit: "us"),
            usesServer: true,
            availability: .ready(ResilienceScenarios.overhead)
        ),
    ]
}
