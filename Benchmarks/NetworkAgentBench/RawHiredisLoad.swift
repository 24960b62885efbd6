import CHiredis
import Foundation
import NetworkAgent

/// `redis_cache_hit`'s baseline: plain hiredis, as a classic client uses it (`redis-benchmark -t get -c 32` does the
/// same): one blocking connection per thread, one `GET` at a time, the threads running at once.
///
/// The threads are the bench's own, never the cooperative pool's; the caller suspends until they are done.
enum RawHiredisLoad {
    /// Where to connect, from a `redis://[:password@]host[:port][/db]` URL.
    struct Target: Sendable {
        let host: String
        let port: Int32
        let database: Int
        let password: String?

        init(_ url: URL) throws {
            guard let components = URLComponents(url: url, resolvingAgainstBaseURL: false), let host = components.host
            else { throw BenchFailure("not a redis:// URL: \(url)") }
            self.host = host
            self.port = Int32(components.port ?? 6379)
            self.database = Int(components.path.dropFirst()) ?? 0
            self.password = components.password
        }
    }

    /// Sends `total` `GET key` from `concurrency` threads, each with its own connection, and returns GETs per second
    /// (connecting is not timed). Every reply must be a string of `expectedBytes` bytes.
    static func getsPerSecond(
        _ target: Target,
        key: Data,
        expectedBytes: Int,
        total: Int,
        concurrency: Int
    ) async throws -> Double {
        try await withCheckedThrowingContinuation { continuation in
            let thread = Thread {
                continuation.resume(
                    with: Result {
                        try run(target, key: key, expectedBytes: expectedBytes, total: total, concurrency: concurrency)
                    }
                )
            }
            thread.start()
        }
    }

    /// Runs the load on the calling thread (not a pool thread) and its worker threads.
    private static func run(
        _ target: Target,
        key: Data,
        expectedBytes: Int,
        total: Int,
        concurrency: Int
    ) throws -> Double {
        let next = Locked(0)
        let failures = Locked<[String]>([])
        let connected = DispatchGroup()
        let finished = DispatchGroup()
        let start = DispatchSemaphore(value: 0)
        for _ in 0..<concurrency {
            connected.enter()
            finished.enter()
            let worker = Thread {
                defer { finished.leave() }
                guard let context = connect(target) else {
                    failures.withLock { $0.append("cannot connect to \(target.host):\(target.port)") }
                    connected.leave()
                    return
                }
                defer { redisFree(context) }
                connected.leave()
                start.wait()
                while next.withLock({ value -> Bool in
                    defer { value += 1 }
                    return value < total
                }) {
                    guard let reply = command(context, [Data("GET".utf8), key]) else {
                        failures.withLock { $0.append("GET failed") }
                        return
                    }
                    let ok = reply.pointee.type == REDIS_REPLY_STRING && Int(reply.pointee.len) == expectedBytes
                    freeReplyObject(reply)
                    if !ok {
                        failures.withLock { $0.append("GET returned something else than the entry") }
                        return
                    }
                }
            }
            worker.start()
        }
        connected.wait()
        let clock = ContinuousClock()
        let began = clock.now
        for _ in 0..<concurrency { start.signal() }
        finished.wait()
        let seconds = began.duration(to: clock.now).seconds
        if let failure = failures.withLock({ $0.first }) { throw BenchFailure("raw hiredis: \(failure)") }
        return Double(total) / seconds
    }

    private static func connect(_ target: Target) -> UnsafeMutablePointer<redisContext>? {
        guard let context = redisConnectWithTimeout(target.host, target.port, timeval(tv_sec: 2, tv_usec: 0)) else {
            return nil
        }
        guard context.pointee.err == 0 else {
            redisFree(context)
            return nil
        }
        var setup: [[Data]] = []
        if let password = target.password { setup.append([Data("AUTH".utf8), Data(password.utf8)]) }
        if target.database != 0 { setup.append([Data("SELECT".utf8), Data("\(target.database)".utf8)]) }
        for arguments in setup {
            guard let reply = command(context, arguments) else {
                redisFree(context)
                return nil
            }
            freeReplyObject(reply)
        }
        return context
    }

    /// One blocking command; `nil` when the connection failed.
    private static func command(
        _ context: UnsafeMutablePointer<redisContext>,
        _ arguments: [Data]
    ) -> UnsafeMutablePointer<redisReply>? {
        var buffer = [UInt8]()
        var offsets: [Int] = []
        var lengths: [Int] = []
        for argument in arguments {
            offsets.append(buffer.count)
            lengths.append(argument.count)
            buffer.append(contentsOf: argument)
        }
        buffer.append(0)
        return buffer.withUnsafeBytes { bytes -> UnsafeMutablePointer<redisReply>? in
            guard let base = bytes.baseAddress else { return nil }
            let pointers = offsets.map { (base + $0).assumingMemoryBound(to: CChar.self) }
            return pointers.withUnsafeBufferPointer { argv in
                lengths.withUnsafeBufferPointer { argvlen -> UnsafeMutablePointer<redisReply>? in
                    guard let argvBase = argv.baseAddress, let lengthBase = argvlen.baseAddress else { return nil }
                    guard CHiredis_append(context, Int32(arguments.count), argvBase, lengthBase) == REDIS_OK else {
                        return nil
                    }
                    return CHiredis_nextReply(context)
                }
            }
        }
    }
}
