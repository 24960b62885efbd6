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

extension RedisStore {
    /// The end of a test's store: removes its keys and shuts it down (a store dropped without `shutdown()` says so
    /// on standard error). For a harness's `cleanUp`.
    var cleanUp: @Sendable () async -> Void {
        { [self] in
            await removeAll()
            await shutdown()
        }
    }
}

/// The stores the behaviour tests run on.
enum StoreKind: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case disk
    case redis

    var testDescription: String { rawValue }

    /// A fresh, empty store of this kind, and what removes it after the test.
    func makeStore() throws -> (any ResponseStore, cleanUp: @Sendable () async -> Void) {
        switch self {
        case .disk:
            let directory = FileManager.default.temporaryDirectory
                .appendingPathComponent("rediscache-disk-\(UUID().uuidString)")
            let store = try DiskStore(directory: directory)
            return (store, { try? FileManager.default.removeItem(at: directory) })
        case .redis:
            let store = try RedisTestServer.makeStore()
            return (store, store.cleanUp)
        }
    }
}

extension CacheHarness {
    /// A harness on a fresh, empty store of `kind`, removed when the harness goes.
    ///
    /// - Parameters:
    ///   - kind: The store.
    ///   - configure: Changes to the plugin's configuration (the clock is set already).
    ///   - handler: The origin's first behaviour.
    convenience init(
        _ kind: StoreKind,
        configure: (inout DiskCachePlugin.Configuration) -> Void = { _ in },
        handler: @escaping Handler
    ) throws {
        let (store, cleanUp) = try kind.makeStore()
        try self.init(store: store, cleanUp: cleanUp, configure: configure, handler: handler)
    }
}
