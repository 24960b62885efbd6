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
