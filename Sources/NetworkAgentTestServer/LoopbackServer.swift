import Foundation

/// An in-process HTTP/1.1 server on 127.0.0.1, for tests and offline mirrors.
///
/// Every accepted connection gets its own thread with blocking I/O; the synchronous `handler` runs on that thread,
/// so it may run concurrently for several connections. Connections stay open between requests (keep-alive) until
/// the client closes, asks for `Connection: close`, or the server was created with `closesConnections`.
/// Every request is recorded (in arrival order, before the handler runs) and can be read back with ``requests``.
///
/// ```swift
/// let server = try LoopbackServer { request in .text("hello \(request.path)") }
/// defer { server.stop() }
/// let url = server.baseURL.appending(path: "world")
/// ```
public final class LoopbackServer: Sendable {
    /// The bound TCP port.
    public let port: Int
    /// `http://127.0.0.1:<port>`, without a trailing slash.
    public let baseURL: URL
    private let core: ServerCore

    /// Binds 127.0.0.1 on `port` (0 picks a free port) and starts accepting at once.
    ///
    /// - Parameters:
    ///   - port: The port to bind, 0...65535; 0 picks a free one.
    ///   - closesConnections: Answer every request with `Connection: close` and close the connection after it.
    ///   - handler: Answers each request; called on the connection's thread, possibly concurrently.
    /// - Throws: ``Error`` when the socket cannot be created or bound.
    public init(
        port: Int,
        closesConnections: Bool = false,
        handler: @escaping @Sendable (ServerRequest) -> ServerResponse
    ) throws {
        guard (0...65_535).contains(port) else {
            throw Error(.invalidArgument, "port out of range", operation: "bind port \(port)")
        }
        let core = try ServerCore(port: port, closesConnections: closesConnections, handler: handler)
        core.start()
        guard let url = URL(string: "http://127.0.0.1:\(core.port)") else {
            core.stop()
            throw Error(.invalidArgument, "invalid URL", operation: "make base URL")
        }
        self.core = core
        self.port = core.port
        self.baseURL = url
    }

    /// Binds 127.0.0.1 on a random free port and starts accepting at once.
    ///
    /// - Parameters:
    ///   - closesConnections: Answer every request with `Connection: close` and close the connection after it.
    ///   - handler: Answers each request; called on the connection's thread, possibly concurrently.
    /// - Throws: ``Error`` when the socket cannot be created or bound.
    public convenience init(
        closesConnections: Bool = false,
        handler: @escaping @Sendable (ServerRequest) -> ServerResponse
    ) throws {
        try self.init(port: 0, closesConnections: closesConnections, handler: handler)
    }

    deinit {
        core.stop()
    }

    /// Every request received so far (since the last ``resetRecording()``), in arrival order.
    public var requests: [ServerRequest] { core.requests }

    /// The number of requests in ``requests``.
    public var requestCount: Int { core.requestCount }

    /// The number of TCP connections accepted so far (not reset by ``resetRecording()``).
    public var connectionCount: Int { core.connectionCount }

    /// The number of connections currently open.
    public var openConnectionCount: Int { core.openConnectionCount }

    /// Forgets the recorded requests. Connection counts and IDs go on unchanged.
    public func resetRecording() {
        core.resetRecording()
    }

    /// Closes the listener and every open connection, and ends stalls and delays; idempotent, also run on `deinit`.
    ///
    /// When it returns, new connections are refused and connection threads have finished, except those still
    /// running the handler (they close their connection when the handler returns).
    public func stop() {
        core.stop()
    }
}
