import Foundation
import NetworkAgentTestServer

/// Two origins on loopback, for redirect tests: `origin` answers `/away` with `status` to `other`, `/near` with
/// `status` to itself, anything else with `home`; `other` answers `other`. The caller stops both.
///
/// - Parameter status: The redirect status, such as 301, 302, 303, 307 or 308.
/// - Returns: The two servers.
/// - Throws: When a server cannot start.
public func redirectingOrigins(status: Int) throws -> (origin: LoopbackServer, other: LoopbackServer) {
    let other = try LoopbackServer { _ in .text("other") }
    let origin = try LoopbackServer { request in
        switch request.path {
        case "/away":
            ServerResponse(status: status, headers: [("Location", other.baseURL.absoluteString + "/landing")])
        case "/near": ServerResponse(status: status, headers: [("Location", "/landing")])
        default: .text("home")
        }
    }
    return (origin, other)
}
