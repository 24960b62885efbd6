import Foundation
import NetworkAgent

/// The origin of a URL: scheme, host and port (RFC 6454 §4), with the scheme's default port filled in.
package struct Origin: Hashable, Sendable {
    package let scheme: String
    package let host: String
    package let port: Int

    /// The origin of an absolute URL; `nil` without scheme or host.
    package init?(_ url: URL) {
        guard let scheme = url.scheme?.lowercased(), let host = url.host?.lowercased(), !host.isEmpty else {
            return nil
        }
        self.scheme = scheme
        self.host = host
        self.port = url.port ?? (scheme == "https" ? 443 : scheme == "http" ? 80 : -1)
    }

    /// Whether traffic to this origin is encrypted.
    package var isSecure: Bool { scheme == "https" }

    /// Whether the host is this machine: `localhost` and `*.localhost` (RFC 6761 §6.3), `127.0.0.0/8` and `::1`.
    package var isLoopback: Bool {
        let bare = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        if bare == "localhost" || bare.hasSuffix(".localhost") || bare == "::1" { return true }
        let octets = bare.split(separator: ".", omittingEmptySubsequences: false)
        guard octets.count == 4, octets[0] == "127" else { return false }
        return octets.allSatisfy { octet in UInt8(octet) != nil }
    }
}
