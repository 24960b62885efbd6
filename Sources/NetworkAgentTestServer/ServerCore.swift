import Dispatch
import Foundation
import NetworkAgent

/// The shared state and threads behind a ``LoopbackServer``.
///
/// The threads retain this object, never the public ``LoopbackServer``, so that dropping the last reference to the
/// server runs its `deinit`, which stops everything.
final class ServerCore: Sendable {
    /// The per-connection record kept while a connection thread runs.
    private struct OpenConnection {
        let fd: Int32
        /// Set while the user's handler runs; `stop()` does not wait for such connections.
        var isInHandler = false
    }

    private struct State {
        var isStopped = false
        var requests: [ServerRequest] = []
        var connectionCount = 0
        var openConnections: [Int: OpenConnection] = [:]
    }

    /// The bound port.
    let port: Int
    /// Whether every response closes its connection.
    let closesConnections: Bool
    private let handler: @Sendable (ServerRequest) -> ServerResponse
    private let listenerFD: Int32
    private let wakeReadFD: Int32
    private let wakeWriteFD: Int32
    /// Signalled by the accept thread once it has closed the listener.
    private let acceptLoopFinished = DispatchSemaphore(value: 0)
    private let state = Locked(State())

    init(
        port: Int,
        closesConnections: Bool,
        handler: @escaping @Sendable (ServerRequest) -> ServerResponse
    ) throws(LoopbackServer.Error) {
        let listener = try Socket.makeListener(port: port)
        let wake: (read: Int32, write: Int32)
        do {
            wake = try Socket.makePipe()
        } catch {
            Socket.close(listener.fd)
            throw error
        }
        self.port = listener.port
        self.listenerFD = listener.fd
        self.wakeReadFD = wake.read
        self.wakeWriteFD = wake.write
        self.closesConnections = closesConnections
        self.handler = handler
    }

    /// Starts the accept thread. Called once, right after `init`, and before any `stop()`, which waits for that
    /// thread to close the listener.
    func start() {
        let thread = Thread { [self] in acceptLoop() }
        thread.name = "LoopbackServer:\(port) accept"
        thread.start()
    }

    // MARK: - Accepting

    private func acceptLoop() {
        // The wake pipe stays open until `stop()` is done with it: writing to a pipe without reader raises SIGPIPE.
        defer {
            Socket.close(listenerFD)
            acceptLoopFinished.signal()
        }
        while !isStopped {
            switch Socket.waitForListener(listenerFD, wake: wakeReadFD) {
            case .wake:
                return
            case .failure:
                Socket.sleep(milliseconds: 10)
                continue
            case .incoming:
                break
            }
            switch Socket.accept(listenerFD) {
            case .accepted(let fd):
                startConnection(fd)
            case .retry:
                continue
            case .failure:
                // Typically EMFILE or ENOBUFS: back off instead of spinning.
                Socket.sleep(milliseconds: 10)
            }
        }
    }

    private func startConnection(_ fd: Int32) {
        let id: Int? = state.withLock { state in
            guard !state.isStopped else { return nil }
            state.connectionCount += 1
            state.openConnections[state.connectionCount] = OpenConnection(fd: fd)
            return state.connectionCount
        }
        guard let id else {
            Socket.close(fd)
            return
        }
        let thread = Thread { [self] in
            ConnectionWorker(core: self, fd: fd, connectionID: id).run()
        }
        thread.name = "LoopbackServer:\(port) connection \(id)"
        thread.start()
    }

    /// Forgets the connection, then closes its descriptor (with RST when `reset`).
    ///
    /// The descriptor leaves `openConnections` under the lock before it is closed, so `stop()` never shuts down a
    /// descriptor number that was closed and reused meanwhile.
    func finishConnection(_ id: Int, fd: Int32, reset: Bool) {
        state.withLock { _ = $0.openConnections.removeValue(forKey: id) }
        if reset { Socket.setLingerZero(fd) }
        Socket.close(fd)
    }

    // MARK: - Requests

    /// Records the request, then runs the handler on the calling connection thread.
    func handle(_ request: ServerRequest) -> ServerResponse {
        state.withLock { state in
            state.requests.append(request)
            state.openConnections[request.connectionID]?.isInHandler = true
        }
        let response = handler(request)
        state.withLock { $0.openConnections[request.connectionID]?.isInHandler = false }
        return response
    }

    var isStopped: Bool { state.withLock { $0.isStopped } }
    var requests: [ServerRequest] { state.withLock { $0.requests } }
    var requestCount: Int { state.withLock { $0.requests.count } }
    var connectionCount: Int { state.withLock { $0.connectionCount } }
    var openConnectionCount: Int { state.withLock { $0.openConnections.count } }

    func resetRecording() {
        state.withLock { $0.requests.removeAll() }
    }

    /// Waits `duration` (nil: forever) in short slices.
    ///
    /// - Returns: true if the whole duration passed; false as soon as the server stops or the peer closes `fd`.
    func pause(for duration: Duration?, watching fd: Int32) -> Bool {
        let clock = ContinuousClock()
        // Clamped so that adding it to `now` cannot overflow.
        let deadline = duration.map { clock.now.advanced(by: min(max($0, .zero), .seconds(100 * 365 * 86_400))) }
        var peerSentMore = false
        while true {
            if isStopped { return false }
            var slice: Int32 = 20
            if let deadline {
                let remaining = deadline - clock.now
                if remaining <= .zero { return true }
                let milliseconds = remaining.roundedMilliseconds + 1
                slice = Int32(min(Int64(slice), milliseconds))
            }
            if peerSentMore {
                // Pipelined bytes keep the socket readable, so polling cannot tell a close apart: just sleep.
                Socket.sleep(milliseconds: Int(slice))
                continue
            }
            switch Socket.waitReadable(fd, milliseconds: slice) {
            case .timeout:
                continue
            case .failure:
                return false
            case .readable:
                switch Socket.peek(fd) {
                case .closed: return false
                case .dataPending: peerSentMore = true
                case .nothingYet: continue
                }
            }
        }
    }

    // MARK: - Stopping

    /// Closes the listener and every open connection; idempotent.
    ///
    /// Returns once the listener is closed and connection threads have finished, except threads inside the
    /// handler (never waited for, as they may be the caller) and stragglers after two seconds.
    func stop() {
        let wasRunning = state.withLock { state -> Bool in
            guard !state.isStopped else { return false }
            state.isStopped = true
            for connection in state.openConnections.values {
                Socket.shutdownBoth(connection.fd)
            }
            return true
        }
        guard wasRunning else { return }
        Socket.writeWakeByte(wakeWriteFD)
        acceptLoopFinished.wait()
        Socket.close(wakeWriteFD)
        Socket.close(wakeReadFD)

        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: .seconds(2))
        while clock.now < deadline {
            let busy = state.withLock { state in
                state.openConnections.values.contains { !$0.isInHandler }
            }
            if !busy { break }
            Socket.sleep(milliseconds: 1)
        }
    }
}
