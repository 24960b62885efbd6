import NetworkAgentTestServer

/// A loopback TCP port nothing listens on right now (bound, then released), for refused-connection tests.
///
/// - Returns: The port.
/// - Throws: When no server can bind.
public func unusedLoopbackPort() throws -> Int {
    let server = try LoopbackServer { _ in .text("") }
    let port = server.port
    server.stop()
    return port
}
