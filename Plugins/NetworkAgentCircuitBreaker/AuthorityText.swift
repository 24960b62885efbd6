import Foundation

extension CircuitBreakerPlugin {
    /// The `scheme://authority` text at the start of a URL (`http://127.0.0.1:8080` of
    /// `http://127.0.0.1:8080/items?page=2`), hashed and compared by its bytes where it lies, without a copy.
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

        /// The URL's whole text, shared, not copied.
        private let text: String
        /// The length of `scheme://authority` in `text`, in bytes.
        private let length: Int

        /// The text of a URL without user information (a URL with a password in it is never kept: such URLs take
        /// the slow path, ``CircuitBreakerPlugin/origin(of:)`` on every call); `nil` for one without an authority.
        init?(_ url: URL) {
            var text = url.absoluteString
            guard let parts = text.withUTF8(Self.scan), parts.userInfoEnd == nil else { return nil }
            self.text = text
            length = parts.end
        }

        /// A copy that holds only the authority's text, to keep in a table.
        var kept: AuthorityText {
            AuthorityText(text: String(decoding: text.utf8.prefix(length), as: UTF8.self))
        }

        private init(text: String) {
            self.text = text
            length = text.utf8.count
        }

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

        /// Runs `body` on the bytes of `scheme://authority`.
        private func withBytes<Result>(_ body: (UnsafeRawBufferPointer) -> Result) -> Result {
            let direct = text.utf8.withContiguousStorageIfAvailable {
                body(UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: $0[..<length])))
            }
            if let direct { return direct }
            return Array(text.utf8.prefix(length)).withUnsafeBytes(body)
        }

        static func == (lhs: AuthorityText, rhs: AuthorityText) -> Bool {
            guard lhs.length == rhs.length else { return false }
            return lhs.withBytes { left in
                rhs.withBytes { right in left.elementsEqual(right) }
            }
        }

        func hash(into hasher: inout Hasher) {
            withBytes { hasher.combine(bytes: $0) }
        }
    }
}
