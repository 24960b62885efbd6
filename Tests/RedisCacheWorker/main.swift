// A second process on a shared Redis store: the child of the Redis cache's multi-process tests (and of the
// `redis_coalesce` benchmark's workers, which run the same code from the benchmark binary).
//
// Usage: RedisCacheWorker <redis URL> <key prefix> <resource URL> <requests> <clock offset in seconds> [<barrier>]
//
// Opens a DiskCachePlugin on a RedisStore whose clock runs `offset` seconds ahead of the wall clock (to make a
// stored entry stale without waiting). With a barrier directory, it creates `<barrier>/ready-<pid>` and waits
// until `<barrier>/go` exists, so that several workers start together. Then it sends `requests` concurrent GETs for
// the resource and prints one summary line:
//   done ok=<2xx answers> failed=<errors and other statuses> hit=<n> stale=<n> revalidated=<n> miss=<n>
import Foundation
import NetworkAgent
import NetworkAgentDiskCache
import NetworkAgentRedisCache

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

struct Resource: NetworkAgentEndpoint {
    var baseURL: URL
    var path: String
    var method = HTTPMethod.get
    var task = HTTPTask.requestPlain
    var timeout: Duration? { .seconds(30) }
}

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("RedisCacheWorker: \(message)\n".utf8))
    exit(2)
}

let arguments = CommandLine.arguments
guard arguments.count == 6 || arguments.count == 7, let redisURL = URL(string: arguments[1]),
    let resource = URL(string: arguments[3]),
    let count = Int(arguments[4]), let offset = Double(arguments[5])
else {
    fail("usage: RedisCacheWorker <redis URL> <key prefix> <resource URL> <requests> <clock offset> [<barrier>]")
}
let store: RedisStore
do {
    store = try RedisStore(
        configuration: RedisStore.Configuration(
            url: redisURL,
            keyPrefix: arguments[2],
            revalidationLockDuration: .seconds(60),
            revalidationWaitLimit: .seconds(30)
        )
    )
} catch {
    fail("\(error)")
}
let plugin = DiskCachePlugin(
    store: store,
    configuration: DiskCachePlugin.Configuration(now: { Date().addingTimeInterval(offset) })
)
let provider = NetworkAgentProvider<Resource>(plugins: [plugin])
let endpoint = Resource(
    baseURL: resource.deletingLastPathComponent(),
    path: resource.lastPathComponent
)

if arguments.count == 7 {
    let barrier = URL(fileURLWithPath: arguments[6], isDirectory: true)
    let ready = barrier.appendingPathComponent("ready-\(ProcessInfo.processInfo.processIdentifier)")
    guard FileManager.default.createFile(atPath: ready.path, contents: nil) else { fail("cannot write \(ready.path)") }
    let go = barrier.appendingPathComponent("go").path
    let deadline = Date().addingTimeInterval(60)
    while !FileManager.default.fileExists(atPath: go) {
        guard Date() < deadline else { fail("no go within 60 s") }
        usleep(1_000)
    }
}

let outcomes = await withTaskGroup(of: String.self) { group in
    for _ in 0..<count {
        group.addTask {
            do {
                let (_, response) = try await provider.request(endpoint: endpoint)
                guard let http = response as? HTTPURLResponse, (200..<300).contains(http.statusCode) else {
                    return "failed"
                }
                return (http.value(forHTTPHeaderField: DiskCachePlugin.defaultStatusHeader) ?? "none").lowercased()
            } catch {
                return "failed"
            }
        }
    }
    var outcomes: [String: Int] = [:]
    for await outcome in group { outcomes[outcome, default: 0] += 1 }
    return outcomes
}
let failed = outcomes["failed", default: 0]
let line = ["hit", "stale", "revalidated", "miss"].map { "\($0)=\(outcomes[$0, default: 0])" }.joined(separator: " ")
FileHandle.standardOutput.write(Data("done ok=\(count - failed) failed=\(failed) \(line)\n".utf8))
