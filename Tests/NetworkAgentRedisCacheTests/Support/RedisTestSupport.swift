import Foundation
import NetworkAgent
import NetworkAgentDiskCache
import NetworkAgentRedisCache
import NetworkAgentTestServer
import NetworkAgentTestSupport
import NetworkAgentTesting
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The Redis the tests run against: `NETWORKAGENT_REDIS_URL`, set by Scripts/interop/start (which Scripts/test runs)
/// from Scripts/redis/start.
enum RedisTestServer {
    static let url: URL? = ProcessInfo.processInfo.environment["NETWORKAGENT_REDIS_URL"].flatMap(URL.init(string:))
    /// In CI a missing Redis fails the Redis tests instead of skipping them.
    static let isCI = ProcessInfo.processInfo.environment["CI"] == "true"
    /// Run the Redis tests: Redis is there, or CI (where `requireURL()` then fails them).
    static let isAvailable = url != nil || isCI
    static let skipReason: Comment =
        "NETWORKAGENT_REDIS_URL is not set: start a redis-server with Scripts/redis/start (Scripts/test does)"

    static func requireURL() throws -> URL {
        try #require(url, "NETWORKAGENT_REDIS_URL is not set, and CI=true: the Redis tests must run in CI")
    }

    /// A key prefix no other test uses.
    static func uniquePrefix(_ name: String = #function) -> String {
        "networkagent-test:\(name.prefix { $0 != "(" }):\(UUID().uuidString.prefix(8))"
    }

    /// A store on the test Redis with a fresh key prefix.
    static func makeStore(
        prefix: String = uniquePrefix(),
        configure: (inout RedisStore.Configuration) -> Void = { _ in }
    ) throws -> RedisStore {
        var configuration = RedisStore.Configuration(url: try requireURL(), keyPrefix: prefix)
        configure(&configuration)
        return try RedisStore(configuration: configuration)
    }
}

/// The stores the behaviour tests run on.
enum StoreKind: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case disk
    case redis

    var testDescription: String { rawValue }

    /// A fresh, empty store of this kind, and what removes it after the test.
    func makeStore() throws -> (any ResponseStore, cleanUp: @Sendable () -> Void) {
        switch self {
        case .disk:
            let directory = FileManager.default.temporaryDirectory
                .appendingPathComponent("rediscache-disk-\(UUID().uuidString)")
            let store = try DiskStore(directory: directory)
            return (store, { try? FileManager.default.removeItem(at: directory) })
        case .redis:
            let store = try RedisTestServer.makeStore()
            return (store, { store.removeAll() })
        }
    }
}

/// Collects the events emitted inside `observe`.
final class EventLog: Sendable {
    private let events = Locked<[NetworkAgentEvent]>([])

    var all: [NetworkAgentEvent] { events.withLock { $0 } }

    func names(source: String = DiskCachePlugin.eventSource) -> [String] {
        all.filter { $0.source == source }.map(\.name)
    }

    func observe<T>(_ operation: () async throws -> T) async rethrows -> T {
        try await NetworkAgentEvents.observing({ [self] event in events.withLock { $0.append(event) } }) {
            try await operation()
        }
    }
}

/// An endpoint on a loopback server.
struct CacheEndpoint: NetworkAgentEndpoint {
    var baseURL: URL
    var path: String
    var method = HTTPMethod.get
    var headers: [String: String] = ["Accept": "text/plain"]
    var task = HTTPTask.requestPlain
    var timeout: Duration? = .seconds(10)
}

/// One answer: body text, response and cache status.
struct CacheAnswer {
    let body: String
    let response: HTTPURLResponse
    var status: CacheStatus? { CacheStatus(response: response) }
    func header(_ name: String) -> String? { response.value(forHTTPHeaderField: name) }
}

/// An IMF-fixdate (RFC 9110 §5.6.7) for a `Date` header.
func httpDate(_ date: Date) -> String {
    let formatter = DateFormatter()
    formatter.locale = Locale(identifier: "en_US_POSIX")
    formatter.timeZone = TimeZone(identifier: "GMT")
    formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
    return formatter.string(from: date)
}

/// A loopback origin with a replaceable handler, a manual clock, and a cache plugin on a given store.
final class StoreHarness: Sendable {
    typealias Handler = @Sendable (ServerRequest, Date) -> ServerResponse

    let clock = ManualClock(startDate: Date(timeIntervalSince1970: 1_700_000_000))
    let server: LoopbackServer
    let plugin: DiskCachePlugin
    let provider: NetworkAgentProvider<CacheEndpoint>
    let events = EventLog()
    private let handler: Locked<Handler>
    private let cleanUp: @Sendable () -> Void

    init(
        store: any ResponseStore,
        cleanUp: @escaping @Sendable () -> Void = {},
        configure: (inout DiskCachePlugin.Configuration) -> Void = { _ in },
        handler: @escaping Handler
    ) throws {
        let current = Locked(handler)
        let clock = self.clock
        server = try LoopbackServer { request in current.withLock { $0 }(request, clock.date) }
        self.handler = current
        self.cleanUp = cleanUp
        var configuration = DiskCachePlugin.Configuration(now: { [clock] in clock.date })
        configure(&configuration)
        plugin = DiskCachePlugin(store: store, configuration: configuration)
        provider = NetworkAgentProvider(plugins: [plugin], agent: TestTransport.agent())
    }

    convenience init(
        _ kind: StoreKind,
        configure: (inout DiskCachePlugin.Configuration) -> Void = { _ in },
        handler: @escaping Handler
    ) throws {
        let (store, cleanUp) = try kind.makeStore()
        try self.init(store: store, cleanUp: cleanUp, configure: configure, handler: handler)
    }

    deinit {
        server.stop()
        cleanUp()
    }

    func respond(_ newHandler: @escaping Handler) { handler.withLock { $0 = newHandler } }

    var requestCount: Int { server.requestCount }

    func send(_ path: String = "/resource", headers: [String: String] = [:]) async throws -> CacheAnswer {
        var allHeaders = ["Accept": "text/plain"]
        allHeaders.merge(headers) { $1 }
        let endpoint = CacheEndpoint(baseURL: server.baseURL, path: path, headers: allHeaders)
        let (data, response) = try await events.observe { try await provider.request(endpoint: endpoint) }
        return CacheAnswer(
            body: String(decoding: data, as: UTF8.self),
            response: try #require(response as? HTTPURLResponse)
        )
    }
}

extension ServerResponse {
    /// A text response with a `Date` header at `date` and the given header fields.
    static func cached(
        _ text: String,
        status: Int = 200,
        at date: Date,
        _ headers: [(name: String, value: String)] = []
    ) -> ServerResponse {
        .text(text, status: status, headers: [("Date", httpDate(date))] + headers)
    }
}

/// A loopback TCP port nothing listens on right now (bound, then released).
func unusedLoopbackPort() throws -> Int {
    let server = try LoopbackServer { _ in .text("") }
    let port = server.port
    server.stop()
    return port
}

/// An executable built next to the test bundle by `swift build` (e.g. `RedisCacheWorker`).
func siblingExecutable(_ name: String) throws -> URL {
    let testBinary = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
    var directory = testBinary.deletingLastPathComponent()
    for _ in 0..<4 {
        let candidate = directory.appendingPathComponent(name)
        if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
        directory = directory.deletingLastPathComponent()
    }
    throw CocoaError(
        .fileNoSuchFile,
        userInfo: [NSFilePathErrorKey: "\(name) next to \(testBinary.path); run swift build first"]
    )
}
