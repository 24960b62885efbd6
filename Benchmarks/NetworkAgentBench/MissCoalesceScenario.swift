import Foundation
import NetworkAgent
import NetworkAgentDiskCache
import NetworkAgentRedisCache
import NetworkAgentTestServer
import NetworkAgentToolSupport

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `miss_coalesce`: collapsed forwarding, 100 concurrent requests for one URL nothing has stored: the requests that
/// reach the origin (a loopback server in the bench process that answers after ``originDelay``), in one process
/// and spread over 4 processes on a shared `RedisStore`.
@MainActor
enum MissCoalesceScenario {
    /// The name of the in-process count the goal checks.
    nonisolated static let inProcess = "origin requests in-process"
    /// The name of the cross-process count the goal checks.
    nonisolated static let acrossProcesses = "origin requests, 4 processes on Redis"
    /// The concurrent requests, in all.
    nonisolated static let requests = 100
    /// The worker processes of the Redis part; each sends `requests / workerProcesses`.
    nonisolated static let workerProcesses = 4
    /// How long the origin takes to answer: every request misses while the first one is there.
    nonisolated static let originDelay = Duration.milliseconds(50)

    /// Runs both parts per repetition, each on a URL of its own. Without Redis the row is not run (the in-process
    /// counts are in the note).
    static func run(_ context: BenchContext) async throws -> Measurement {
        let origin = try LoopbackServer { request in
            ServerResponse(
                status: 200,
                headers: [
                    ("Date", httpDate(Date())), ("Cache-Control", "max-age=300"),
                    ("Content-Type", "application/json"),
                ],
                body: .data(BenchRoutes.document),
                delay: originDelay
            )
        }
        defer { origin.stop() }
        let redis = await RedisScenarios.redis(context)
        var local: [Int] = []
        var shared: [Int] = []
        var answers: [String] = []
        for repetition in 0..<context.options.repetitions {
            let (count, statuses) = try await inProcess(origin: origin, path: "cold-\(repetition).json")
            local.append(count)
            answers.append(statuses)
            if case .success(let redisURL) = redis {
                shared.append(
                    try await acrossProcesses(
                        context,
                        redis: redisURL,
                        origin: origin,
                        path: "cold-redis-\(repetition).json",
                        repetition: repetition
                    )
                )
            }
        }
        let counts = "in-process origin requests per repetition: " + local.map(String.init).joined(separator: ", ")
        if case .failure(let reason) = redis {
            var measurement = Measurement.notRun("\(reason.description); \(counts)")
            measurement.counts[inProcess] = local
            return measurement
        }
        var measurement = Measurement(
            baseline: local.map { _ in Double(requests) },
            subject: local.map(Double.init)
        )
        measurement.counts[inProcess] = local
        measurement.counts[acrossProcesses] = shared
        measurement.note =
            "\(requests) concurrent GETs of one URL nothing has stored (max-age=300, the origin answers after "
            + "\(originDelay.roundedMilliseconds) ms), a new URL per repetition; baseline: the requests sent (each would "
            + "reach the origin without collapsed forwarding); \(counts); answers in-process: "
            + answers.joined(separator: " | ") + "; with \(workerProcesses) processes x "
            + "\(requests / workerProcesses) on Redis, origin requests per repetition: "
            + shared.map(String.init).joined(separator: ", ")
        return measurement
    }

    /// 100 concurrent requests through one provider with a cache on a fresh ``MemoryStore``: the origin requests
    /// for `path`, and how the requests were answered.
    private static func inProcess(origin: LoopbackServer, path: String) async throws -> (Int, String) {
        let provider = NetworkAgentProvider<BenchEndpoint>(plugins: [DiskCachePlugin(store: MemoryStore())])
        let endpoint = BenchEndpoint.get(origin.baseURL, path: path)
        let statuses = try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<requests {
                group.addTask {
                    let (data, response) = try await provider.request(endpoint: endpoint)
                    try BenchRoutes.checkDocument(data, response)
                    return CacheStatus(response: response)?.rawValue ?? "none"
                }
            }
            var counts: [String: Int] = [:]
            for try await status in group { counts[status, default: 0] += 1 }
            return counts
        }
        let answered = statuses.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }.joined(separator: ", ")
        return (origin.requests.filter { $0.path == "/" + path }.count, answered)
    }

    /// 4 worker processes (the bench started again with `--redis-worker`) × 25 concurrent requests on one Redis:
    /// the origin requests for `path`.
    private static func acrossProcesses(
        _ context: BenchContext,
        redis: URL,
        origin: LoopbackServer,
        path: String,
        repetition: Int
    ) async throws -> Int {
        let prefix = "networkagent-bench:\(ProcessInfo.processInfo.processIdentifier):miss:\(repetition)"
        _ = try await RedisScenarios.runWorkers(
            context,
            count: workerProcesses,
            redis: redis,
            prefix: prefix,
            resource: origin.baseURL.appendingPathComponent(path),
            requestsEach: requests / workerProcesses,
            clockOffset: 0
        )
        if let written = try? RedisStore(configuration: RedisStore.Configuration(url: redis, keyPrefix: prefix)) {
            await written.removeAll()
            await written.shutdown()
        }
        return origin.requests.filter { $0.path == "/" + path }.count
    }
}
