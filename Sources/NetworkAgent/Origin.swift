import Foundation

/// The origin of a URL: scheme, host and port (RFC 6454 §4), with the scheme's default port filled in, so that
/// `http://a` and `http://a:80` are one origin.
///
/// The one origin rule of the package: the redirect policy uses it to decide which headers cross a hop, the auth
/// plugin to decide where credentials go.
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
        // The auth plugin asks on every plain-http request: an ASCII host is read as bytes, in place.
        if let answer = host.utf8.withContiguousStorageIfAvailable(Self.isLoopbackASCII) ?? nil {
            return answer
        }
        let bare = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        if bare == "localhost" || bare.hasSuffix(".localhost") || bare == "::1" { return true }
        let octets = bare.split(separator: ".", omittingEmptySubsequences: false)
        guard octets.count == 4, octets[0] == "127" else { return false }
        return octets.allSatisfy { octet in UInt8(octet) != nil }
    }

    /// ``isLoopback`` of an ASCII host's bytes; `nil` for a host with other bytes.
    private static func isLoopbackASCII(_ host: UnsafeBufferPointer<UInt8>) -> Bool? {
        guard host.allSatisfy({ $0 < 0x80 }) else { return nil }
        var bare = host[...]
        if bare.count >= 2, bare.first == UInt8(ascii: "["), bare.last == UInt8(ascii: "]") {
            bare = bare.dropFirst().dropLast()
        }
        let localhost = "localhost".utf8
        if bare.elementsEqual(localhost) || bare.elementsEqual("::1".utf8) { return true }
        if bare.count > localhost.count, bare.suffix(localhost.count).elementsEqual(localhost),
            bare[bare.endIndex - localhost.count - 1] == UInt8(ascii: ".")
        {
            return true
        }
        // Four octets, the first `127`, each what `UInt8(_:)` reads.
        var octets = 0
        var start = bare.startIndex
        while true {
            let end = bare[start...].firstIndex(of: UInt8(ascii: ".")) ?? bare.endIndex
            let octet = bare[start..<end]
            guard octets < 4, octets > 0 || octet.elementsEqual("127".utf8),
                UInt8(String(decoding: octet, as: UTF8.self)) != nil
            else { return false }
            octets += 1
            guard end < bare.endIndex else { return octets == 4 }
            start = end + 1
        }
    }
}
