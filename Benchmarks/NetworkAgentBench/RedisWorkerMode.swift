import Foundation
import NetworkAgent
import NetworkAgentDiskCache
import NetworkAgentRedisCache

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The hidden `--redis-worker REDIS PREFIX RESOURCE REQUESTS OFFSET BARRIER` mode: one of `redis_coalesce`'s
/// processes (the same steps as the tests' `RedisCacheWorker`).
///
/// It opens a ``DiskCachePlugin`` on a ``RedisStore`` whose clock runs `OFFSET` seconds ahead, creates
/// `BARRIER/ready-<pid>`, waits for `BARRIER/go`, sends `REQUESTS` concurrent GETs of `RESOURCE`, and prints
/// `done ok=N failed=N hit=N stale=N revalidated=N miss=N`.
enum RedisWorkerMode {
    static func run(_ arguments: [String]) async -> Int32 {
        guard arguments.count == 6, let redisURL = URL(string: arguments[0]), let resource = URL(string: arguments[2]),
            let count = Int(arguments[3]), let offset = Double(arguments[4])
        else {
            log("--redis-worker needs REDIS PREFIX RESOURCE REQUESTS OFFSET BARRIER")
            return 2
        }
        let store: RedisStore
        do {
            store = try RedisStore(
                configuration: RedisStore.Configuration(
                    url: redisURL,
                    keyPrefix: arguments[1],
                    revalidationLockDuration: .seconds(60),
                    revalidationWaitLimit: .seconds(30)
                )
            )
        } catch {
            log("\(error)")
            return 2
        }
        let provider = NetworkAgentProvider<BenchEndpoint>(
            plugins: [
                DiskCachePlugin(
                    store: store,
                    configuration: DiskCachePlugin.Configuration(now: { Date().addingTimeInterval(offset) })
                )
            ]
        )
        let endpoint = BenchEndpoint.get(resource.deletingLastPathComponent(), path: resource.lastPathComponent)
        let barrier = URL(fileURLWithPath: arguments[5], isDirectory: true)
        let ready = barrier.appending(path: "ready-\(ProcessInfo.processInfo.processIdentifier)")
        guard FileManager.default.createFile(atPath: ready.path, contents: nil) else {
            log("cannot write \(ready.path)")
            return 1
        }
        let go = barrier.appending(path: "go").path
        let clock = ContinuousClock()
        let deadline = clock.now + .seconds(60)
        while !FileManager.default.fileExists(atPath: go) {
            guard clock.now < deadline else { return 1 }
            try? await Task.sleep(for: .milliseconds(1))
        }
        let outcomes = await withTaskGroup(of: String.self) { group in
            for _ in 0..<count {
                group.addTask {
                    guard let (data, response) = try? await provider.request(endpoint: endpoint),
                        (try? BenchRoutes.checkDocument(data, response)) != nil
                    else { return "failed" }
                    return CacheStatus(response: response)?.rawValue ?? "none"
                }
            }
            var outcomes: [String: Int] = [:]
            for await outcome in group { outcomes[outcome, default: 0] += 1 }
            return outcomes
        }
        let failed = outcomes["failed", default: 0]
        let kinds = ["hit", "stale", "revalidated", "miss"].map { "\($0)=\(outcomes[$0, default: 0])" }
        print("done ok=\(count - failed) failed=\(failed) \(kinds.joined(separator: " "))")
        return 0
    }

    /// A worker's summary line as counts by name.
    static func parseSummary(_ output: String) -> [String: Int] {
        let line = output.split(separator: "\n").last { $0.hasPrefix("done ") } ?? ""
        var counts: [String: Int] = [:]
        for field in line.split(separator: " ").dropFirst() {
            let parts = field.split(separator: "=")
            if parts.count == 2, let value = Int(parts[1]) { counts[String(parts[0])] = value }
        }
        return counts
    }

    /// An IMF-fixdate (RFC 9110 §5.6.7).
    static func httpDate(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter.string(from: date)
    }
}
