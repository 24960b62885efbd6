import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// HTTP field names compared and spelled as Foundation's `URLRequest` does, without its cost per call.
package enum HTTPFieldName {
    /// Whether two field names are equal without case, as `URLRequest.value(forHTTPHeaderField:)` compares them
    /// (both lowercased): ASCII names are compared byte by byte without allocating, others through `lowercased()`.
    package static func equal(_ lhs: String, _ rhs: String) -> Bool {
        let ascii = lhs.utf8.withContiguousStorageIfAvailable { left in
            rhs.utf8.withContiguousStorageIfAvailable { right in asciiEqual(left, right) } ?? nil
        }
        if let ascii = ascii ?? nil { return ascii }
        guard lhs.utf8.count == rhs.utf8.count || !isASCII(lhs) || !isASCII(rhs) else { return false }
        guard isASCII(lhs), isASCII(rhs) else { return lhs.lowercased() == rhs.lowercased() }
        return zip(lhs.utf8, rhs.utf8).allSatisfy { left, right in
            left == right || (left | 0x20 == right | 0x20 && (left | 0x20) >= 0x61 && (left | 0x20) <= 0x7a)
        }
    }

    /// ``equal(_:_:)`` of two names' bytes when both are ASCII; `nil` when either has a byte that is not (its
    /// lowercase form may have another length).
    static func asciiEqual(_ lhs: UnsafeBufferPointer<UInt8>, _ rhs: UnsafeBufferPointer<UInt8>) -> Bool? {
        guard lhs.count == rhs.count else {
            return lhs.allSatisfy { $0 < 0x80 } && rhs.allSatisfy { $0 < 0x80 } ? false : nil
        }
        for index in 0..<lhs.count {
            let left = lhs[index]
            let right = rhs[index]
            guard left < 0x80, right < 0x80 else { return nil }
            if left == right { continue }
            let folded = left | 0x20
            if left ^ right == 0x20, folded >= 0x61, folded <= 0x7a { continue }
            // A difference between ASCII letters decides only when the rest is ASCII too.
            return lhs[index...].allSatisfy { $0 < 0x80 } && rhs[index...].allSatisfy { $0 < 0x80 } ? false : nil
        }
        return true
    }

    private static func isASCII(_ text: String) -> Bool {
        text.utf8.allSatisfy { $0 < 0x80 }
    }

    /// The most names ``canonical(_:)`` remembers.
    private static let remembered = 256
    private static let spellings = Locked([String: String]())

    /// The name under which `URLRequest.setValue(_:forHTTPHeaderField:)` files a new field: Foundation's
    /// `capitalized` spelling (`x-api-key` becomes `X-Api-Key`), worked out once per name (up to 256 names; the rest
    /// every time), since `capitalized` goes through `NSString` and costs microseconds.
    package static func canonical(_ name: String) -> String {
        if isCapitalizedASCII(name) { return name }
        if let known = spellings.withLock({ $0[name] }) { return known }
        let spelled = name.capitalized
        spellings.withLock { spellings in
            if spellings.count < remembered { spellings[name] = spelled }
        }
        return spelled
    }

    /// Whether `name` is ASCII letters in words joined by `-`, each word an uppercase letter and then lowercase ones
    /// (`Authorization`, `Accept-Encoding`): its own ``canonical(_:)`` spelling, known without a look-up.
    private static func isCapitalizedASCII(_ name: String) -> Bool {
        var wordStart = true
        for byte in name.utf8 {
            switch byte {
            case UInt8(ascii: "-"):
                guard !wordStart else { return false }
                wordStart = true
            case UInt8(ascii: "A")...UInt8(ascii: "Z"):
                guard wordStart else { return false }
                wordStart = false
            case UInt8(ascii: "a")...UInt8(ascii: "z"):
                guard !wordStart else { return false }
            default:
                return false
            }
        }
        return !wordStart
    }

    /// The value of field `name` (in any case) in `fields`, as `URLRequest.headerField(_:)` finds it.
    package static func value(of name: String, in fields: [String: String]) -> String? {
        if let exact = fields[name] { return exact }
        for (key, value) in fields where equal(key, name) { return value }
        return nil
    }

    /// `URLRequest.setHeaderField(_:for:)` on a field dictionary: the field, under whatever case it has,
    /// goes, and a value is filed under ``canonical(_:)``'s spelling of `name`.
    package static func set(_ value: String?, for name: String, in fields: inout [String: String]) {
        let existing = fields[name] != nil ? name : fields.keys.first { equal($0, name) }
        if let existing { fields[existing] = nil }
        if let value { fields[canonical(name)] = value }
    }
}

extension URLRequest {
    /// `value(forHTTPHeaderField:)` for the hot paths of the chain: the same answer, but one pass over the fields
    /// comparing names ASCII case-insensitively, where Foundation on Linux case-folds every field name through
    /// `NSString` on each call.
    ///
    /// - Parameter name: The field name, in any case.
    /// - Returns: The field's value, or `nil` when the request has no such field.
    package func headerField(_ name: String) -> String? {
        guard let fields = allHTTPHeaderFields else { return nil }
        return HTTPFieldName.value(of: name, in: fields)
    }

    /// `setValue(_:forHTTPHeaderField:)` for the hot paths of the chain, with the same result: the field, under
    /// whatever case it has, goes, and a value is filed under Foundation's spelling of `name`
    /// (``HTTPFieldName/canonical(_:)``).
    ///
    /// - Parameters:
    ///   - value: The new value, or `nil` to remove the field.
    ///   - name: The field name, in any case.
    package mutating func setHeaderField(_ value: String?, for name: String) {
        var fields = allHTTPHeaderFields ?? [:]
        guard value != nil || HTTPFieldName.value(of: name, in: fields) != nil else { return }
        HTTPFieldName.set(value, for: name, in: &fields)
        allHTTPHeaderFields = fields
    }

    /// `setHeaderField(value, for: name)` when the request has no field `name` (in any case), with one pass over the
    /// fields instead of one to find the field and another to replace it; a request that has the field is left as
    /// it is.
    ///
    /// - Parameters:
    ///   - value: The value.
    ///   - name: The field name, in any case.
    package mutating func addHeaderFieldIfAbsent(_ value: String, for name: String) {
        var fields = allHTTPHeaderFields ?? [:]
        guard HTTPFieldName.value(of: name, in: fields) == nil else { return }
        fields[HTTPFieldName.canonical(name)] = value
        allHTTPHeaderFields = fields
    }
}

extension Substring {
    /// `trimmingCharacters(in: .whitespaces)`, without its `NSString` round trip when the text is ASCII (there
    /// `.whitespaces` is space and tab); other text takes Foundation's trimming. For field names and list members.
    package func trimmingWhitespace() -> String {
        guard utf8.allSatisfy({ $0 < 0x80 }) else { return trimmingCharacters(in: .whitespaces) }
        let bytes = utf8
        guard let first = bytes.firstIndex(where: { $0 != 0x20 && $0 != 0x09 }),
            let last = bytes.lastIndex(where: { $0 != 0x20 && $0 != 0x09 })
        else { return "" }
        return String(decoding: bytes[first...last], as: UTF8.self)
    }
}
