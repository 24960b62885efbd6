import Foundation

extension CircuitBreakerPlugin {
    /// The `scheme://authority` text at the start of a URL (`http://127.0.0.1:8080` of
    /// `http://127.0.0.1:8080/items?page=2`), copied into a fixed-size value, so that finding a call's circuit by it
    /// allocates nothing and retains nothing.
    ///
    /// The default key (``Key/origin``) is a function of this text alone, so the plugin finds a call's circuit by it:
    /// the key string is built once per distinct text, not on every call (building it was half of the breaker's CPU
    /// per call in a `perf` profile of the bench's `breaker_overhead`).
    struct AuthorityText: Hashable, Sendable {
        /// Where the parts of a URL's text end, as byte offsets.
        struct Parts {
            /// The offset of the ':' after the scheme.
            let schemeEnd: Int
            /// The offset of the first byte after `//`.
            let start: Int
            /// The offset of the end of the authority: the first `/`, `?` or `#` after `start`, or the text's length.
            let end: Int
            /// The offset of the last `@` of the authority, which ends the user information, if any.
            let userInfoEnd: Int?
        }

        /// The longest text kept: longer ones take the slow path (the key built on every call).
        static let capacity = 64

        /// The text's bytes in eight words, zero after `length`: copied with one `memcpy`, compared word by word.
        private var words: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0, 0, 0, 0)
        private var length = 0
        /// FNV-1a of the bytes, so that hashing is one word.
        private var digest: UInt64 = 0xcbf2_9ce4_8422_2325

        /// The text of a URL; `nil` for one without an authority, with user information (a URL with a password in
        /// it is never kept: such URLs take the slow path, ``CircuitBreakerPlugin/origin(of:)`` on every call) or
        /// longer than ``capacity``.
        init?(_ url: URL) {
            var text = url.absoluteString
            guard
                let copied = text.withUTF8({ utf8 -> AuthorityText? in
                    guard let parts = Self.scan(utf8), parts.userInfoEnd == nil, parts.end <= Self.capacity else {
                        return nil
                    }
                    let bytes = UnsafeBufferPointer(rebasing: utf8[..<parts.end])
                    var copy = AuthorityText()
                    withUnsafeMutableBytes(of: &copy.words) { $0.copyMemory(from: UnsafeRawBufferPointer(bytes)) }
                    for byte in bytes {
                        copy.digest = (copy.digest ^ UInt64(byte)) &* 0x0000_0100_0000_01B3
                    }
                    copy.length = parts.end
                    return copy
                })
            else { return nil }
            self = copied
        }

        private init() {}

        /// Splits a URL's text: `scheme:` then `//` then the authority up to `/`, `?`, `#` or the end.
        ///
        /// - Parameter bytes: The URL's text as UTF-8.
        /// - Returns: The parts; `nil` when there is no `scheme://`.
        static func scan(_ bytes: UnsafeBufferPointer<UInt8>) -> Parts? {
            guard let colon = bytes.firstIndex(of: UInt8(ascii: ":")), colon + 2 < bytes.count,
                bytes[colon + 1] == UInt8(ascii: "/"), bytes[colon + 2] == UInt8(ascii: "/")
            else { return nil }
            let start = colon + 3
            var end = start
            var at: Int?
            while end < bytes.count {
                let byte = bytes[end]
                if byte == UInt8(ascii: "/") || byte == UInt8(ascii: "?") || byte == UInt8(ascii: "#") { break }
                if byte == UInt8(ascii: "@") { at = end }
                end += 1
            }
            return Parts(schemeEnd: colon, start: start, end: end, userInfoEnd: at)
        }

        static func == (lhs: AuthorityText, rhs: AuthorityText) -> Bool {
            let (l, r) = (lhs.words, rhs.words)
            return lhs.length == rhs.length && l.0 == r.0 && l.1 == r.1 && l.2 == r.2 && l.3 == r.3 && l.4 == r.4
                && l.5 == r.5 && l.6 == r.6 && l.7 == r.7
        }

        func hash(into hasher: inout Hasher) {
            hasher.combine(digest)
        }
    }
}
