import Foundation
import NetworkAgent
import NetworkAgentDiskCache
import NetworkAgentRedisCache
import NetworkAgentTestServer
import NetworkAgentToolSupport

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `redis_cache_hit` and `redis_coalesce`: the disk cache's rules on a ``RedisStore``.
///
/// Redis is `NETWORKAGENT_REDIS_URL` when set, otherwise a throwaway redis-server started with Scripts/redis/start
/// (stopped at the end of the run). Without either the scenarios are reported not run, with the reason; the bench
/// does not fail.
@MainActor
enum RedisScenarios {
    /// The Redis of this run, looked up once: its URL, or why there is none.
    private static var redis: Result<URL, BenchFailure>?

    /// The name of the count `redis_coalesce`'s goal checks.
    nonisolated static let originRequests = "origin requests per stale entry"
    /// The worker processes of `redis_coalesce`.
    nonisolated static let workerProcesses = 4
    /// The concurrent requests of each worker.
    nonisolated static let requestsPerWorker = 50
    /// How far ahead of the wall clock the workers' clocks run: two minutes, so the entry stored now (max-age=60)
    /// is stale for them.
    nonisolated static let clockOffset = 120

    /// `redis_cache_hit`: fresh hits/s through a provider whose only plugin is a ``DiskCachePlugin`` on a
    /// ``RedisStore``, against raw hiredis `GET`s of the very bytes the store holds for that entry
    /// (``RawHiredisLoad``); 32 in flight on both sides. Also, in the note, the median latency of a hit one at a
    /// time, and the rate of the same `GET` through the store's own pipelined connections.
    static func hit(_ context: BenchContext) async throws -> Measurement {
        let redisURL: URL
        switch await redis(context) {
        case .success(let url): redisURL = url
        case .failure(let reason): return .notRun(reason.description)
        }
        let server = try await context.server()
        let store = try RedisStore(
            configuration: RedisStore.Configuration(
                url: redisURL,
                keyPrefix: "networkagent-bench:\(ProcessInfo.processInfo.processIdentifier):hit"
            )
        )
        return try await using(store) {
            let transport = CountingTransport(forwardingTo: URLSessionTransport(configuration: .ephemeral))
            let agent = NetworkAgent(transport: transport)
            let cached = NetworkAgentProvider<BenchEndpoint>(plugins: [DiskCachePlugin(store: store)], agent: agent)
            let endpoint = BenchEndpoint.get(server.baseURL, path: BenchRoutes.cacheableDocument)

            let (data, response) = try await cached.request(endpoint: endpoint)
            try BenchRoutes.checkDocument(data, response)
            guard CacheStatus(response: response) == .miss,
                let key = CacheKey(request: try agent.urlRequest(for: endpoint))
            else { throw BenchFailure("the first fetch of /\(BenchRoutes.cacheableDocument) was not a miss") }
            let redisKey = Data(store.redisKey(for: key).utf8)
            guard case .string(let stored) = await store.rawCommand([Data("GET".utf8), redisKey]) else {
                throw BenchFailure("the entry was not stored in Redis (is it reachable at \(redisURL)?)")
            }
            let storedCount = stored.count
            let target = try RawHiredisLoad.Target(redisURL)
            let hit: @Sendable () async throws -> Void = {
                let (data, response) = try await cached.request(endpoint: endpoint)
                try BenchRoutes.checkDocument(data, response)
                guard CacheStatus(response: response) == .hit else {
                    throw BenchFailure("expected a fresh hit, got \(response)")
                }
            }
            let pipelinedGET: @Sendable () async throws -> Void = {
                guard case .string(let bytes) = await store.rawCommand([Data("GET".utf8), redisKey]),
                    bytes.count == storedCount
                else { throw BenchFailure("a GET through the store did not return the stored entry") }
            }
            let concurrency = ThroughputComparison.concurrency
            let total = ThroughputComparison.requestsPerRepetition(quick: context.options.quick)
            let warmUp = ThroughputComparison.warmUpRequests
            _ = try await RawHiredisLoad.getsPerSecond(
                target,
                key: redisKey,
                expectedBytes: storedCount,
                total: warmUp,
                concurrency: concurrency
            )
            _ = try await LoadGenerator.requestsPerSecond(total: warmUp, concurrency: concurrency, hit)
            var pipelined: [Double] = []
            var measurement = try await Repetitions.interleaved(
                context.options.repetitions,
                baseline: {
                    try await RawHiredisLoad.getsPerSecond(
                        target,
                        key: redisKey,
                        expectedBytes: storedCount,
                        total: total,
                        concurrency: concurrency
                    )
                },
                subject: {
                    let hits = try await LoadGenerator.requestsPerSecond(total: total, concurrency: concurrency, hit)
                    pipelined.append(
                        try await LoadGenerator.requestsPerSecond(total: total, concurrency: concurrency, pipelinedGET)
                    )
                    return hits
                }
            )
            let sequential = context.options.quick ? 500 : 2_000
            let latency = try await medianMicroseconds(of: hit, count: sequential)
            guard transport.calls == 1 else {
                throw BenchFailure("the cached provider went to the network \(transport.calls) times, not once")
            }
            log(String(format: "redis_cache_hit: median hit latency %.1f us", latency))
            measurement.note = [
                String(format: "hit median latency %.1f us (%d sequential hits)", latency, sequential),
                "baseline: raw hiredis GETs of the stored entry (\(storedCount) bytes), \(concurrency) threads with a "
                    + "blocking connection each (as redis-benchmark -c \(concurrency)); subject: fresh hits through a "
                    + "provider with only the cache (1 network fetch, 0 while measured), \(concurrency) in flight",
                String(
                    format: "the same GET through the store's own pipelined connections: %.0f/s (hits/that: %.3f)",
                    pipelined.median ?? 0,
                    (measurement.value ?? 0) / max(1, pipelined.median ?? 1)
                ),
                "\(total) requests per repetition and side",
            ].joined(separator: "; ")
            return measurement
        }
    }

    /// `redis_coalesce`: 4 processes (this bench started again with `--redis-worker`) × 50 concurrent requests for
    /// one entry that is stale for all of them and must be validated (`ETag`, `max-age=60`, no
    /// `stale-while-revalidate`); the value is the conditional requests that reached the origin, a loopback
    /// server in this process. Without coalescing it would be 200.
    static func coalesce(_ context: BenchContext) async throws -> Measurement {
        let redisURL: URL
        switch await redis(context) {
        case .success(let url): redisURL = url
        case .failure(let reason): return .notRun(reason.description)
        }
        let conditional = Locked(0)
        let offset = TimeInterval(clockOffset)
        let origin = try LoopbackServer { request in
            if request.header("If-None-Match") == "\"v1\"" {
                conditional.withLock { $0 += 1 }
                return ServerResponse(
                    status: 304,
                    headers: [
                        ("Date", httpDate(Date().addingTimeInterval(offset))),
                        ("Cache-Control", "max-age=60"), ("ETag", "\"v1\""),
                    ]
                )
            }
            return .json(
                BenchRoutes.document,
                headers: [
                    ("Date", httpDate(Date())), ("Cache-Control", "max-age=60"), ("ETag", "\"v1\""),
                ]
            )
        }
        defer { origin.stop() }
        var counts: [Int] = []
        var outcomes: [String] = []
        for repetition in 0..<context.options.repetitions {
            let prefix = "networkagent-bench:\(ProcessInfo.processInfo.processIdentifier):coalesce:\(repetition)"
            let store = try RedisStore(configuration: RedisStore.Configuration(url: redisURL, keyPrefix: prefix))
            try await using(store) {
                let provider = NetworkAgentProvider<BenchEndpoint>(plugins: [DiskCachePlugin(store: store)])
                let endpoint = BenchEndpoint.get(origin.baseURL, path: "popular.json")
                _ = try await provider.request(endpoint: endpoint)
                let before = conditional.withLock { $0 }
                let summaries = try await runWorkers(
                    context,
                    count: workerProcesses,
                    redis: redisURL,
                    prefix: prefix,
                    resource: origin.baseURL.appendingPathComponent("popular.json"),
                    requestsEach: requestsPerWorker,
                    clockOffset: clockOffset
                )
                counts.append(conditional.withLock { $0 } - before)
                let kinds = ["hit", "revalidated", "stale", "miss"]
                outcomes.append(
                    kinds.map { kind in "\(summaries.reduce(0) { $0 + ($1[kind] ?? 0) }) \(kind)" }.joined(
                        separator: ", "
                    )
                )
            }
        }
        let total = Double(workerProcesses * requestsPerWorker)
        var measurement = Measurement(
            baseline: counts.map { _ in total },
            subject: counts.map(Double.init)
        )
        measurement.counts[originRequests] = counts
        measurement.note =
            "\(workerProcesses) processes x \(requestsPerWorker) concurrent GETs of one entry stale for all (their "
            + "clocks \(clockOffset) s ahead; ETag, max-age=60, no stale-while-revalidate); baseline: the requests "
            + "sent (each would revalidate without coalescing); origin conditional requests per repetition: "
            + counts.map(String.init).joined(separator: ", ") + "; answers per repetition: "
            + outcomes.joined(separator: " | ")
        return measurement
    }

    /// Runs `body`, then removes the keys of `store` and shuts it down, whether or not `body` threw.
    private static func using<Value>(_ store: RedisStore, _ body: () async throws -> Value) async throws -> Value {
        do {
            let result = try await body()
            await store.removeAll()
            await store.shutdown()
            return result
        } catch {
            await store.removeAll()
            await store.shutdown()
            throw error
        }
    }

    /// The median time of `count` sequential calls, in microseconds.
    private static func medianMicroseconds(
        of call: @Sendable () async throws -> Void,
        count: Int
    ) async throws -> Double {
        let clock = ContinuousClock()
        var latencies: [Double] = []
        latencies.reserveCapacity(count)
        for _ in 0..<count {
            let start = clock.now
            try await call()
            latencies.append(start.duration(to: clock.now).seconds * 1e6)
        }
        return latencies.median ?? 0
    }

    /// The run's Redis, found or started on the first call.
    /// Runs `count` worker processes (the bench started again with `--redis-worker`) on one Redis, each sending
    /// `requestsEach` requests for `resource`, and returns their summaries; fails unless every request succeeded.
    static func runWorkers(
        _ context: BenchContext,
        count: Int,
        redis: URL,
        prefix: String,
        resource: URL,
        requestsEach: Int,
        clockOffset: Int
    ) async throws -> [[String: Int]] {
        let summaries: [[String: Int]]
        do {
            summaries = try await RedisWorker.runWorkers(
                executable: context.executable,
                leading: ["--redis-worker"],
                count: count,
                redis: redis,
                prefix: prefix,
                resource: resource,
                requests: requestsEach,
                clockOffset: clockOffset
            )
        } catch let failure as RedisWorker.Failure {
            throw BenchFailure(failure.description)
        }
        let ok = summaries.reduce(0) { $0 + ($1["ok"] ?? 0) }
        guard ok == count * requestsEach else {
            throw BenchFailure("only \(ok) of \(count * requestsEach) worker requests succeeded")
        }
        return summaries
    }

    static func redis(_ context: BenchContext) async -> Result<URL, BenchFailure> {
        if let redis { return redis }
        let found = await findOrStartRedis()
        redis = found
        if case .success(let url) = found { log("redis: \(url.absoluteString)") }
        return found
    }

    private static func findOrStartRedis() async -> Result<URL, BenchFailure> {
        if let text = ProcessInfo.processInfo.environment["NETWORKAGENT_REDIS_URL"] {
            guard let url = URL(string: text) else {
                return .failure(BenchFailure("NETWORKAGENT_REDIS_URL is not a URL"))
            }
            return .success(url)
        }
        guard Executables.find("redis-server", alsoIn: ["/usr/bin", "/usr/local/bin"]) != nil else {
            return .failure(
                BenchFailure("no Redis: redis-server is not installed and NETWORKAGENT_REDIS_URL is not set")
            )
        }
        let fromSource = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appending(path: "Scripts/redis")
        let fromWorkingDirectory = URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
            .appending(path: "Scripts/redis")
        guard
            let scripts = [fromSource, fromWorkingDirectory].first(where: {
                FileManager.default.isExecutableFile(atPath: $0.appending(path: "start").path)
            })
        else { return .failure(BenchFailure("no Redis: Scripts/redis/start not found")) }
        guard let started = try? await ChildProcess.run(scripts.appending(path: "start").path, []),
            started.status == 0
        else { return .failure(BenchFailure("no Redis: Scripts/redis/start failed")) }
        var values: [String: String] = [:]
        for line in started.output.split(separator: "\n") {
            guard let equals = line.firstIndex(of: "=") else { continue }
            values[String(line[..<equals])] = String(line[line.index(after: equals)...])
        }
        guard let directory = values["REDIS_DIR"], let url = values["REDIS_URL"].flatMap(URL.init(string:)) else {
            return .failure(BenchFailure("no Redis: Scripts/redis/start printed no URL"))
        }
        let stop = scripts.appending(path: "stop").path
        Cleanup.add {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: stop)
            process.arguments = [directory]
            process.standardInput = FileHandle.nullDevice
            try? process.run()
            process.waitUntilExit()
        }
        return .success(url)
    }
}
