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

    /// SIGKILL: no goodbye to the clients. Returns once the port is closed.
    func kill() async {
        guard let process, process.isRunning else { return }
        signalKill(process.processIdentifier)
        _ = await eventually(within: .seconds(10)) { !process.isRunning && !accepts() }
        self.process = nil
    }

    private func signalKill(_ pid: Int32) {
        #if canImport(Glibc)
        _ = Glibc.kill(pid, SIGKILL)
        #elseif canImport(Darwin)
        _ = Darwin.kill(pid, SIGKILL)
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
        let provider = NetworkAgentProvider<CacheEndpoint>(
            plugins: [DiskCachePlugin(store: store)],
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
        #expect(await eventually { statuses.withLock { $0.count } > 40 })
        await redis.kill()
        let countAtKill = statuses.withLock { $0.count }
        #expect(await eventually { statuses.withLock { $0.count } > countAtKill + 40 })
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
    }
}
