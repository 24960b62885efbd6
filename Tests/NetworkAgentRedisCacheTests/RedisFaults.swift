import Foundation
import NetworkAgent
import NetworkAgentTestServer
import NetworkAgentTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Faults for the store's budget tests: a redis-server of the test's own that can be paused (`SIGSTOP`: it still
/// accepts TCP, in the kernel, but never answers), and a TCP server that answers anything with a fixed reply.

/// A ``PrivateRedis`` started with a pid file, so that the test can signal it.
struct PausableRedis {
    let redis: PrivateRedis
    let pid: pid_t

    /// Starts a private redis-server and reads its pid.
    static func start() async throws -> PausableRedis {
        let redis = try PrivateRedis()
        let pidFile = redis.directory.appendingPathComponent("redis.pid").path
        try #require(try await redis.start(["--pidfile", pidFile]), "redis-server did not start on \(redis.port)")
        var pid: pid_t = 0
        let written = await eventually(within: .seconds(10)) {
            let text = (try? String(contentsOfFile: pidFile, encoding: .utf8)) ?? ""
            pid = pid_t(text.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
            return pid > 0
        }
        try #require(written, "redis-server wrote no pid file")
        return PausableRedis(redis: redis, pid: pid)
    }

    var url: URL? { redis.url }

    /// `SIGSTOP`: the server keeps its socket (new connections complete in the kernel) and answers nothing.
    func pause() throws { try send(SIGSTOP) }

    /// `SIGCONT`: the server answers again, queued commands first.
    func resume() throws { try send(SIGCONT) }

    private func send(_ signal: Int32) throws {
        #if canImport(Glibc)
        let result = Glibc.kill(pid, signal)
        #else
        let result = Darwin.kill(pid, signal)
        #endif
        try #require(result == 0, "kill(\(pid), \(signal)) failed: errno \(errno)")
    }
}

/// A loopback TCP server that answers the first bytes of every connection with `reply`, then keeps the connection
/// open and silent until stopped: a hostile or broken "Redis".
final class FixedReplyServer: Sendable {
    let port: Int
    private let listener: Int32
    private let state = Locked((stopped: false, clients: [Int32]()))

    init(reply: String) throws {
        let (descriptor, port) = try loopbackListener()
        listener = descriptor
        self.port = port
        let bytes = Array(reply.utf8)
        let state = self.state
        let thread = Thread {
            while true {
                let client = accept(descriptor, nil, nil)
                guard client >= 0 else { return }
                let keep = state.withLock { current -> Bool in
                    guard !current.stopped else { return false }
                    current.clients.append(client)
                    return true
                }
                guard keep else {
                    close(client)
                    return
                }
                Thread.detachNewThread {
                    var buffer = [UInt8](repeating: 0, count: 4_096)
                    guard read(client, &buffer, buffer.count) > 0 else { return }
                    _ = bytes.withUnsafeBytes { write(client, $0.baseAddress, $0.count) }
                }
            }
        }
        thread.start()
    }

    deinit {
        stop()
        close(listener)
    }

    /// Stops accepting and closes every connection.
    func stop() {
        let clients = state.withLock { current -> [Int32] in
            guard !current.stopped else { return [] }
            current.stopped = true
            let clients = current.clients
            current.clients = []
            return clients
        }
        shutdown(listener, Int32(SHUT_RDWR))
        for client in clients {
            shutdown(client, Int32(SHUT_RDWR))
            close(client)
        }
    }
}

/// A loopback TCP proxy to a Redis that holds every chunk of the server's answers for `delay` before passing it on:
/// a Redis one round trip of `delay` away, so that the round trips a client makes can be counted by the clock.
final class DelayingProxy: Sendable {
    let port: Int
    private let listener: Int32
    private let state = Locked((stopped: false, sockets: [Int32]()))

    init(to upstreamPort: Int, delay: Duration) throws {
        let (listener, port) = try loopbackListener()
        self.listener = listener
        self.port = port
        let state = self.state
        Thread {
            while true {
                let client = accept(listener, nil, nil)
                guard client >= 0 else { return }
                let upstream = Self.dial(upstreamPort)
                let keep = state.withLock { current -> Bool in
                    guard !current.stopped, upstream >= 0 else { return false }
                    current.sockets += [client, upstream]
                    return true
                }
                guard keep else {
                    close(client)
                    if upstream >= 0 { close(upstream) }
                    continue
                }
                Thread.detachNewThread { Self.pump(from: client, to: upstream, delay: .zero) }
                Thread.detachNewThread { Self.pump(from: upstream, to: client, delay: delay) }
            }
        }
        .start()
    }

    deinit {
        stop()
        close(listener)
    }

    /// Stops accepting and closes every connection.
    func stop() {
        let sockets = state.withLock { current -> [Int32] in
            guard !current.stopped else { return [] }
            current.stopped = true
            defer { current.sockets = [] }
            return current.sockets
        }
        shutdown(listener, Int32(SHUT_RDWR))
        for socket in sockets { shutdown(socket, Int32(SHUT_RDWR)) }
    }

    private static func pump(from source: Int32, to destination: Int32, delay: Duration) {
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            var received = read(source, &buffer, buffer.count)
            guard received > 0 else { break }
            if delay > .zero {
                Thread.sleep(forTimeInterval: delay / .seconds(1))
                // What arrived meanwhile goes with this chunk: a delay per round trip, not per chunk.
                while received < buffer.count {
                    let more = buffer[received...].withUnsafeMutableBytes {
                        recv(source, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT))
                    }
                    guard more > 0 else { break }
                    received += more
                }
            }
            var sent = 0
            while sent < received {
                let written = buffer[sent..<received].withUnsafeBytes { write(destination, $0.baseAddress, $0.count) }
                guard written > 0 else { return }
                sent += written
            }
        }
        shutdown(destination, Int32(SHUT_WR))
    }

    private static func dial(_ port: Int) -> Int32 {
        #if canImport(Glibc)
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let descriptor = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard descriptor >= 0 else { return -1 }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
        guard connected else {
            close(descriptor)
            return -1
        }
        return descriptor
    }
}

/// A TCP socket listening on a free loopback port, and the port.
private func loopbackListener() throws -> (descriptor: Int32, port: Int) {
    #if canImport(Glibc)
    let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    #else
    let descriptor = socket(AF_INET, SOCK_STREAM, 0)
    #endif
    try #require(descriptor >= 0, "socket: errno \(errno)")
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = 0
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            bind(descriptor, $0, length) == 0 && listen(descriptor, 16) == 0
                && getsockname(descriptor, $0, &length) == 0
        }
    }
    guard bound else {
        close(descriptor)
        throw CocoaError(.fileWriteUnknown, userInfo: [NSLocalizedDescriptionKey: "bind: errno \(errno)"])
    }
    return (descriptor, Int(UInt16(bigEndian: address.sin_port)))
}
