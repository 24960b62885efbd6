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

/// A redis-server of the test's own (killed and restarted, so not the shared one), on a free loopback port.
final class PrivateRedis {
    let port: Int
    let directory: URL
    private var process: Process?

    init() throws {
        port = try unusedLoopbackPort()
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("redis-restart-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    deinit {
        if let process, process.isRunning { signalKill(process.processIdentifier) }
        try? FileManager.default.removeItem(at: directory)
    }

    var url: URL? { URL(string: "redis://127.0.0.1:\(port)/0") }

    /// Starts redis-server in the foreground of a child process and waits until it accepts connections.
    ///
    /// - Parameter options: More `--name value` options, e.g. a `maxmemory`.
    func start(_ options: [String] = []) async throws -> Bool {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments =
            [
                "redis-server", "--bind", "127.0.0.1", "--port", "\(port)", "--save", "", "--appendonly", "no",
                "--dir", directory.path, "--logfile", directory.appendingPathComponent("redis.log").path,
            ] + options
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        self.process = process
        return await eventually(within: .seconds(10)) { accepts() }
    }

    /// SIGKILL: no goodbye to the clients. Returns once the process is gone and its port closed.
    ///
    /// - Returns: Whether the signal was delivered, the process ended and nothing accepts on the port any more.
    func kill() async -> Bool {
        guard let process, process.isRunning else { return false }
        guard signalKill(process.processIdentifier) else { return false }
        let gone = await eventually(within: .seconds(10)) { !process.isRunning && !accepts() }
        if gone { self.process = nil }
        return gone
    }

    /// Sends SIGKILL; `true` when it was delivered.
    @discardableResult
    private func signalKill(_ pid: Int32) -> Bool {
        #if canImport(Glibc)
        return Glibc.kill(pid, SIGKILL) == 0
        #elseif canImport(Darwin)
        return Darwin.kill(pid, SIGKILL) == 0
        #else
        return false
        #endif
    }

    private func accepts() -> Bool {
        #if canImport(Glibc)
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let descriptor = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
    }
}

/// Redis killed in the middle of a run and started again: no request fails, and the cache works again after.
@Suite(.enabled(if: RedisTestServer.isAvailable, RedisTestServer.skipReason))
struct RedisRestartTests {
    @Test func killingRedisMidRunLosesNoRequestAndTheStoreReconnects() async throws {
        let redis = try PrivateRedis()
        try #require(try await redis.start(), "redis-server did not start on port \(redis.port)")
        let store = try RedisStore(
            configuration: RedisStore.Configuration(
                url: try #require(redis.url),
                connectTimeout: .milliseconds(200),
                commandTimeout: .milliseconds(500),
                reconnectDelay: .milliseconds(20),
                maximumReconnectDelay: .milliseconds(200)
            )
        )
        let origin = try LoopbackServer { request in
            .text("item \(request.path)", headers: [("Date", httpDate(Date())), ("Cache-Control", "max-age=300")])
        }
        defer { origin.stop() }
        let cache = DiskCachePlugin(store: store)
        let provider = NetworkAgentProvider<CacheEndpoint>(
            plugins: [cache],
            agent: TestTransport.agent()
        )
        let failures = Locked<[String]>([])
        let statuses = Locked<[CacheStatus?]>([])
        let running = Locked(true)

        func request(_ path: String) async -> CacheStatus? {
            do {
                let (data, response) = try await provider.request(
                    endpoint: CacheEndpoint(baseURL: origin.baseURL, path: path)
                )
                let http = response as? HTTPURLResponse
                if http?.statusCode != 200 || String(decoding: data, as: UTF8.self) != "item \(path)" {
                    failures.withLock { $0.append("\(path): \(http?.statusCode ?? 0)") }
                }
                let status = CacheStatus(response: response)
                statuses.withLock { $0.append(status) }
                return status
            } catch {
                failures.withLock { $0.append("\(path): \(error)") }
                return nil
            }
        }

        #expect(await request("/a") == .miss)
        #expect(await request("/a") == .hit)
        // Four loops of requests run through the kill and the restart.
        let loops = Task {
            await withTaskGroup(of: Void.self) { group in
                for loop in 0..<4 {
                    group.addTask {
                        var round = 0
                        while running.withLock({ $0 }) {
                            _ = await request("/loop\(loop)/\(round % 8)")
                            round += 1
                        }
                    }
                }
            }
        }
        // Each loop cycles through eight paths: once each has been stored, with Redis up, they are hits.
        #expect(await eventually { statuses.withLock { $0.count > 64 && $0.suffix(16).allSatisfy { $0 == .hit } } })
        try #require(await redis.kill(), "redis-server (port \(redis.port)) did not die")
        let countAtKill = statuses.withLock { $0.count }
        let originAtKill = origin.requestCount
        let errorsAtKill = cache.stats.errors
        #expect(await eventually { statuses.withLock { $0.count } > countAtKill + 40 })
        // While Redis is down nothing can be served from it: the same paths are misses again, each one fetched from
        // the origin, and the plugin reports the store's failures (`cache.error`). The first few answers may have
        // been looked up just before the kill; the rest came after it.
        let whileDown = statuses.withLock { Array($0[(countAtKill + 8)...]) }
        let originWhileDown = origin.requestCount - originAtKill
        #expect(whileDown.count > 30)
        #expect(whileDown.allSatisfy { $0 == .miss }, "\(whileDown.filter { $0 != .miss })")
        #expect(originWhileDown >= whileDown.count, "\(originWhileDown) origin requests for \(whileDown.count) answers")
        #expect(cache.stats.errors > errorsAtKill)
        try #require(try await redis.start(), "redis-server did not restart on port \(redis.port)")
        // Once the store has reconnected, what is stored again is served again.
        var hitAfterRestart = false
        for _ in 0..<400 where !hitAfterRestart {
            _ = await request("/after")
            hitAfterRestart = await request("/after") == .hit
        }
        running.withLock { $0 = false }
        await loops.value
        #expect(hitAfterRestart)
        #expect(failures.withLock { $0 } == [])
        await store.shutdown()
    }
}
