import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

#if canImport(Darwin)
private let streamSocketType: Int32 = SOCK_STREAM
private let sendFlags: Int32 = 0
#else
private let streamSocketType = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
// MSG_NOSIGNAL: a peer that went away must never raise SIGPIPE in the test process.
private let sendFlags = Int32(MSG_NOSIGNAL)
#endif

/// Thin wrappers over the POSIX calls the server needs. Every function retries on `EINTR`.
enum Socket {
    /// What a receive call produced.
    enum ReceiveResult {
        case bytes(Int)
        case endOfStream
        case failure(Int32)
    }

    /// What an accept call produced.
    enum AcceptResult {
        case accepted(Int32)
        case retry
        case failure(Int32)
    }

    /// What waiting on the listener produced.
    enum ListenerEvent {
        case incoming
        case wake
        case failure(Int32)
    }

    /// What waiting on a connected socket produced.
    enum ReadinessEvent {
        case timeout
        case readable
        case failure(Int32)
    }

    /// What a non-blocking one-byte peek found.
    enum PeekResult {
        case dataPending
        case nothingYet
        case closed
    }

    /// The text of an errno value.
    static func errorText(_ code: Int32) -> String {
        String(cString: strerror(code))
    }

    /// Creates a listening TCP socket on 127.0.0.1:`port` (0 picks a free port); returns it and the bound port.
    static func makeListener(port: Int) throws(LoopbackServer.Error) -> (fd: Int32, port: Int) {
        let fd = socket(AF_INET, streamSocketType, 0)
        guard fd >= 0 else { throw LoopbackServer.Error.systemCall("socket", errorNumber: errno) }
        do {
            try configureListener(fd, port: port)
            return (fd, try boundPort(of: fd))
        } catch {
            close(fd)
            throw error
        }
    }

    private static func configureListener(_ fd: Int32, port: Int) throws(LoopbackServer.Error) {
        #if canImport(Darwin)
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        #endif
        var yes: Int32 = 1
        guard setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size)) == 0 else {
            throw LoopbackServer.Error.systemCall("setsockopt(SO_REUSEADDR)", errorNumber: errno)
        }
        var address = sockaddr_in()
        #if canImport(Darwin)
        address.sin_len = UInt8(MemoryLayout<sockaddr_in>.size)
        #endif
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(truncatingIfNeeded: port).bigEndian)
        address.sin_addr = in_addr(s_addr: in_addr_t(UInt32(0x7F00_0001).bigEndian))
        let bound = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw in
                bind(fd, raw, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0 else {
            throw LoopbackServer.Error.systemCall("bind 127.0.0.1:\(port)", errorNumber: errno)
        }
        guard listen(fd, 256) == 0 else { throw LoopbackServer.Error.systemCall("listen", errorNumber: errno) }
        // Non-blocking so that accept after poll never blocks when a pending connection vanished meanwhile.
        let flags = fcntl(fd, F_GETFL, 0)
        guard flags >= 0, fcntl(fd, F_SETFL, flags | O_NONBLOCK) == 0 else {
            throw LoopbackServer.Error.systemCall("fcntl(O_NONBLOCK)", errorNumber: errno)
        }
    }

    private static func boundPort(of fd: Int32) throws(LoopbackServer.Error) -> Int {
        var address = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let result = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw in
                getsockname(fd, raw, &length)
            }
        }
        guard result == 0 else { throw LoopbackServer.Error.systemCall("getsockname", errorNumber: errno) }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// Creates a pipe whose read end wakes the accept loop.
    static func makePipe() throws(LoopbackServer.Error) -> (read: Int32, write: Int32) {
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else { throw LoopbackServer.Error.systemCall("pipe", errorNumber: errno) }
        _ = fcntl(fds[0], F_SETFD, FD_CLOEXEC)
        _ = fcntl(fds[1], F_SETFD, FD_CLOEXEC)
        return (fds[0], fds[1])
    }

    /// Blocks until the listener has a pending connection or the wake pipe becomes readable.
    static func waitForListener(_ listener: Int32, wake: Int32) -> ListenerEvent {
        var fds = [
            pollfd(fd: listener, events: Int16(POLLIN), revents: 0),
            pollfd(fd: wake, events: Int16(POLLIN), revents: 0),
        ]
        while true {
            let result = poll(&fds, nfds_t(fds.count), -1)
            if result < 0 {
                if errno == EINTR { continue }
                return .failure(errno)
            }
            if fds[1].revents != 0 { return .wake }
            if fds[0].revents != 0 { return .incoming }
        }
    }

    /// Accepts one connection as a blocking, close-on-exec socket with `TCP_NODELAY` set.
    static func accept(_ listener: Int32) -> AcceptResult {
        #if canImport(Darwin)
        let fd = Darwin.accept(listener, nil, nil)
        #else
        let fd = Glibc.accept(listener, nil, nil)
        #endif
        guard fd >= 0 else {
            let code = errno
            switch code {
            case EINTR, EAGAIN, EWOULDBLOCK, ECONNABORTED, EPROTO: return .retry
            default: return .failure(code)
            }
        }
        let flags = fcntl(fd, F_GETFL, 0)
        if flags >= 0 && flags & O_NONBLOCK != 0 {
            _ = fcntl(fd, F_SETFL, flags & ~O_NONBLOCK)
        }
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        var yes: Int32 = 1
        _ = setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &yes, socklen_t(MemoryLayout<Int32>.size))
        #if canImport(Darwin)
        _ = setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &yes, socklen_t(MemoryLayout<Int32>.size))
        #endif
        return .accepted(fd)
    }

    /// Receives up to `buffer.count` bytes, blocking until at least one arrives or the stream ends.
    static func receive(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer) -> ReceiveResult {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return .bytes(0) }
        while true {
            let count = recv(fd, base, buffer.count, 0)
            if count > 0 { return .bytes(count) }
            if count == 0 { return .endOfStream }
            if errno == EINTR { continue }
            return .failure(errno)
        }
    }

    /// Sends every byte; returns false when the peer went away or the socket failed.
    static func sendAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) -> Bool {
        guard let base = bytes.baseAddress else { return true }
        var offset = 0
        while offset < bytes.count {
            let sent = send(fd, base + offset, bytes.count - offset, sendFlags)
            if sent > 0 {
                offset += sent
            } else if sent < 0 && errno == EINTR {
                continue
            } else {
                return false
            }
        }
        return true
    }

    /// Sends every byte of `bytes`; returns false when the peer went away or the socket failed.
    static func sendAll<Bytes: ContiguousBytes>(_ fd: Int32, _ bytes: Bytes) -> Bool {
        bytes.withUnsafeBytes { sendAll(fd, $0) }
    }

    /// Waits up to `milliseconds` for the socket to become readable (data, end of stream or error).
    static func waitReadable(_ fd: Int32, milliseconds: Int32) -> ReadinessEvent {
        var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        let result = poll(&descriptor, 1, milliseconds)
        if result < 0 { return errno == EINTR ? .timeout : .failure(errno) }
        return result == 0 ? .timeout : .readable
    }

    /// Looks at the next byte without consuming it and without blocking.
    static func peek(_ fd: Int32) -> PeekResult {
        var byte: UInt8 = 0
        let count = recv(fd, &byte, 1, Int32(MSG_PEEK) | Int32(MSG_DONTWAIT))
        if count > 0 { return .dataPending }
        if count == 0 { return .closed }
        switch errno {
        case EAGAIN, EWOULDBLOCK, EINTR: return .nothingYet
        default: return .closed
        }
    }

    /// Writes a single byte, used to wake the accept loop.
    static func writeWakeByte(_ fd: Int32) {
        var byte: UInt8 = 1
        while write(fd, &byte, 1) < 0 && errno == EINTR {}
    }

    /// Shuts down both directions, waking any thread blocked in `recv` or `send` on that socket.
    static func shutdownBoth(_ fd: Int32) {
        _ = shutdown(fd, Int32(SHUT_RDWR))
    }

    /// Shuts down the sending direction only (sends FIN, keeps reading possible).
    static func shutdownWrite(_ fd: Int32) {
        _ = shutdown(fd, Int32(SHUT_WR))
    }

    /// Sets `SO_LINGER` to zero so that the following close sends RST instead of FIN.
    static func setLingerZero(_ fd: Int32) {
        var value = linger(l_onoff: 1, l_linger: 0)
        _ = setsockopt(fd, SOL_SOCKET, SO_LINGER, &value, socklen_t(MemoryLayout<linger>.size))
    }

    /// Closes the descriptor (never retried on `EINTR`, as POSIX leaves its state unspecified).
    static func close(_ fd: Int32) {
        #if canImport(Darwin)
        _ = Darwin.close(fd)
        #else
        _ = Glibc.close(fd)
        #endif
    }

    /// Sleeps the calling thread.
    static func sleep(milliseconds: Int) {
        guard milliseconds > 0 else { return }
        usleep(useconds_t(min(milliseconds, 1000) * 1000))
    }
}
