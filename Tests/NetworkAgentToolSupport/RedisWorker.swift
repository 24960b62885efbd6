import Foundation
import NetworkAgent
import NetworkAgentDiskCache
import NetworkAgentRedisCache
import NetworkAgentTestServer

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A second process on a shared Redis store: the one implementation behind the Redis cache's multi-process tests
/// (the `RedisCacheWorker` executable) and the `redis_coalesce` and `miss_coalesce` benchmarks (the bench's hidden
/// `--redis-worker` mode).
///
/// Arguments: `<redis URL> <key prefix> <resource URL> <requests> <clock offset in seconds> [<barrier>]`.
///
/// A worker opens a `DiskCachePlugin` on a `RedisStore` whose clock runs `offset` seconds ahead of the wall clock
/// (to make a stored entry stale without waiting). Its requests wait up to 30 s for another process's revalidation
/// or fetch of a miss, so that a loaded machine does not turn a slow holder into extra origin requests. With a barrier directory, it creates `<barrier>/ready-<pid>` and
/// waits until `<barrier>/go` exists, so that several workers start together (``runWorkers(executable:leading:count:redis:prefix:resource:requests:clockOffset:)``
/// is the other side). Then it sends `requests` concurrent GETs for the resource and prints one summary line:
/// `done ok=<accepted answers> failed=<errors and other answers> hit=<n> stale=<n> revalidated=<n> miss=<n>`.
package enum RedisWorker {
    /// The arguments, for a usage message.
    package static let usage =
        "<redis URL> <key prefix> <resource URL> <requests> <clock offset in seconds> [<barrier>]"

    /// A worker that failed or could not start.
    package struct Failure: Error, CustomStringConvertible {
        package let description: String
        package let exitStatus: Int32

        package init(_ description: String, exitStatus: Int32 = 2) {
            self.description = description
            self.exitStatus = exitStatus
        }
    }

    /// The one endpoint a worker requests.
    struct Resource: NetworkAgentEndpoint {
        var baseURL: URL
        var path: String
        var method: HTTPMethod { .get }
        var task: HTTPTask { .requestPlain }
        var timeout: Duration? { .seconds(30) }
    }

    /// Runs one worker to its end and prints its summary line.
    ///
    /// - Parameters:
    ///   - arguments: The arguments, without the program's name (see ``usage``).
    ///   - agent: The agent to send on: the test run's transport in the tests, the default one in the bench.
    ///   - accepts: Whether an answer counts as `ok`; by default any 2xx.
    /// - Returns: The exit status: 0 when it ran (whatever the answers), 2 when it could not.
    package static func main(
        _ arguments: [String],
        agent: NetworkAgent,
        accepts: @escaping @Sendable (Data, HTTPURLResponse) -> Bool = { _, response in
            (200..<300).contains(response.statusCode)
        }
    ) async -> Int32 {
        do {
            let summary = try await run(arguments, agent: agent, accepts: accepts)
            FileHandle.standardOutput.write(Data((summary + "\n").utf8))
            return 0
        } catch let failure as Failure {
            FileHandle.standardError.write(Data("redis worker: \(failure.description)\n".utf8))
            return failure.exitStatus
        } catch {
            FileHandle.standardError.write(Data("redis worker: \(error)\n".utf8))
            return 2
        }
    }

    /// Runs one worker and returns its summary line.
    static func run(
        _ arguments: [String],
        agent: NetworkAgent,
        accepts: @escaping @Sendable (Data, HTTPURLResponse) -> Bool
    ) async throws -> String {
        guard arguments.count == 5 || arguments.count == 6, let redisURL = URL(string: arguments[0]),
            let resource = URL(string: arguments[2]), let count = Int(arguments[3]),
            let offset = Double(arguments[4])
        else {
            throw Failure("usage: \(usage)")
        }
        let store = try RedisStore(
            configuration: RedisStore.Configuration(
                url: redisURL,
                keyPrefix: arguments[1],
                revalidationLockDuration: .seconds(60),
                revalidationWaitLimit: .seconds(30)
            )
        )
        let plugin = DiskCachePlugin(
            store: store,
            configuration: DiskCachePlugin.Configuration(
                missWaitLimit: .seconds(30),
                now: { Date().addingTimeInterval(offset) }
            )
        )
        let provider = NetworkAgentProvider<Resource>(plugins: [plugin], agent: agent)
        let endpoint = Resource(baseURL: resource.deletingLastPathComponent(), path: resource.lastPathComponent)
        if arguments.count == 6 {
            try await waitAtBarrier(URL(fileURLWithPath: arguments[5], isDirectory: true))
        }
        let outcomes = await withTaskGroup(of: String.self) { group in
            for _ in 0..<count {
                group.addTask {
                    guard let (data, response) = try? await provider.request(endpoint: endpoint),
                        let http = response as? HTTPURLResponse, accepts(data, http)
                    else { return "failed" }
                    return CacheStatus(response: http)?.rawValue ?? "none"
                }
            }
            var outcomes: [String: Int] = [:]
            for await outcome in group { outcomes[outcome, default: 0] += 1 }
            return outcomes
        }
        await store.shutdown()
        let failed = outcomes["failed", default: 0]
        let kinds = ["hit", "stale", "revalidated", "miss"].map { "\($0)=\(outcomes[$0, default: 0])" }
        return "done ok=\(count - failed) failed=\(failed) \(kinds.joined(separator: " "))"
    }

    /// Announces `<barrier>/ready-<pid>` and waits, at most 60 s, for `<barrier>/go`.
    private static func waitAtBarrier(_ barrier: URL) async throws {
        let ready = barrier.appendingPathComponent("ready-\(ProcessInfo.processInfo.processIdentifier)")
        guard FileManager.default.createFile(atPath: ready.path, contents: nil) else {
            throw Failure("cannot write \(ready.path)")
        }
        let go = barrier.appendingPathComponent("go").path
        let clock = ContinuousClock()
        let deadline = clock.now + .seconds(60)
        while !FileManager.default.fileExists(atPath: go) {
            guard clock.now < deadline else { throw Failure("no go within 60 s") }
            try await Task.sleep(for: .milliseconds(1))
        }
    }

    /// Starts `count` workers, lets them go together once all are ready, and returns their summaries: counts by
    /// name (`ok`, `failed`, `hit`, `stale`, `revalidated`, `miss`).
    ///
    /// - Parameters:
    ///   - executable: The program that runs ``main(_:agent:accepts:)``.
    ///   - leading: Arguments before the worker's own, such as the bench's `--redis-worker`.
    ///   - count: How many workers.
    ///   - redis: The Redis they share.
    ///   - prefix: The key prefix they share.
    ///   - resource: What each requests.
    ///   - requests: How many concurrent requests each sends.
    ///   - clockOffset: How far ahead of the wall clock their caches' clocks run, in seconds.
    /// - Returns: One summary per worker, in the order they were started.
    /// - Throws: ``Failure`` when the workers do not all start within 60 s or one of them exits with an error.
    package static func runWorkers(
        executable: String,
        leading: [String] = [],
        count: Int,
        redis: URL,
        prefix: String,
        resource: URL,
        requests: Int,
        clockOffset: Int
    ) async throws -> [[String: Int]] {
        let barrier = FileManager.default.temporaryDirectory.appendingPathComponent(
            "redis-barrier-\(UUID().uuidString)"
        )
        try FileManager.default.createDirectory(at: barrier, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: barrier) }
        let arguments =
            leading + [
                redis.absoluteString, prefix, resource.absoluteString, "\(requests)", "\(clockOffset)", barrier.path,
            ]
        let workers = (0..<count).map { _ in Task { try await ChildProcess.run(executable, arguments) } }
        let allReady = await eventually(within: .seconds(60)) {
            ((try? FileManager.default.contentsOfDirectory(atPath: barrier.path)) ?? []).count == count
        }
        _ = FileManager.default.createFile(atPath: barrier.appendingPathComponent("go").path, contents: nil)
        var summaries: [[String: Int]] = []
        var errors: [String] = []
        for worker in workers {
            let result = try await worker.value
            if result.status != 0 { errors.append("exit \(result.status): \(result.error)") }
            summaries.append(parseSummary(result.output))
        }
        guard allReady else { throw Failure("the redis workers did not all start within 60 s: \(errors)") }
        guard errors.isEmpty else { throw Failure("a redis worker failed: \(errors.joined(separator: "; "))") }
        return summaries
    }

    /// A worker's summary line as counts by name.
    ///
    /// - Parameter output: The worker's standard output.
    /// - Returns: The counts of its last `done` line; empty when there is none.
    package static func parseSummary(_ output: String) -> [String: Int] {
        let line = output.split(separator: "\n").last { $0.hasPrefix("done ") } ?? ""
        var counts: [String: Int] = [:]
        for field in line.split(separator: " ").dropFirst() {
            let parts = field.split(separator: "=")
            if parts.count == 2, let value = Int(parts[1]) { counts[String(parts[0])] = value }
        }
        return counts
    }
}
