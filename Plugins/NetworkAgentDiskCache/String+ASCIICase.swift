import Foundation

extension String {
    /// Whether two strings are equal when ASCII letters are compared without case: how HTTP field names compare
    /// (RFC 9110 §5.1). Much cheaper than Foundation's `caseInsensitiveCompare` on Linux.
    func equalsIgnoringASCIICase(_ other: String) -> Bool {
        guard utf8.count == other.utf8.count else { return false }
        return zip(utf8, other.utf8).allSatisfy { lhs, rhs in
            lhs == rhs || (lhs | 0x20 == rhs | 0x20 && (lhs | 0x20) >= 0x61 && (lhs | 0x20) <= 0x7a)
        }
    }
}

extension Substring {
    /// `trimmingCharacters(in: .whitespaces)`, without its `NSString` round trip when the text is ASCII (there
    /// `.whitespaces` is space and tab); other text takes Foundation's trimming.
    func trimmingWhitespace() -> String {
        guard utf8.allSatisfy({ $0 < 0x80 }) else { return trimmingCharacters(in: .whitespaces) }
        let bytes = utf8
        guard let first = bytes.firstIndex(where: { $0 != 0x20 && $0 != 0x09 }),
            let last = bytes.lastIndex(where: { $0 != 0x20 && $0 != 0x09 })
        else { return "" }
        return String(decoding: bytes[first...last], as: UTF8.self)
    }
}
