import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension HTTPURLResponse {
    /// `value(forHTTPHeaderField:)`, with the same answer for every response, without Foundation's cost per call when
    /// it can: Foundation lowercases the name asked for and then every field name of the response until one is
    /// equal (allocating for names over 15 bytes), once per call.
    ///
    /// A response made by ``withTransferTimings(_:url:statusCode:httpVersion:headerFields:)`` with timings (every
    /// response of `CurlTransport`) keeps the fields it was made from; when they are all ASCII, at most one of them
    /// matches `name` (ASCII case folded on the bytes, nothing allocated), and it is the answer. Foundation files
    /// each field under a spelling that differs from the given one by case only (ASCII names), so it holds the
    /// same values under the same names up to case, and its look-up finds the same one. Where that reasoning does
    /// not hold — any other response, a name or field name that is not ASCII, an empty name, two fields whose names
    /// differ only by case (Foundation keeps one of them, in its own dictionary's order) — this asks Foundation.
    ///
    /// - Parameter name: The field name, in any case.
    /// - Returns: The field's value, or `nil` when the response has no such field.
    package func headerField(_ name: String) -> String? {
        guard type(of: self) == TimedHTTPURLResponse.self,
            let fields = unsafeDowncast(self, to: TimedHTTPURLResponse.self).givenFields,
            let answer = Self.uniqueASCIIField(name, in: fields)
        else { return value(forHTTPHeaderField: name) }
        return answer
    }

    /// The value of the one field of `fields` named `name` up to ASCII case (`.some(nil)` when none is), or `nil`
    /// when the shortcut does not decide: `name` or a field name is empty or not ASCII, or two fields match.
    ///
    /// Read on the names' bytes: each field name is checked to be ASCII (a name that is not could, lowercased or
    /// respelled by Foundation, meet an ASCII one: the Kelvin sign lowercases to `k`) and compared only when its
    /// length is `name`'s.
    static func uniqueASCIIField(_ name: String, in fields: [String: String]) -> String?? {
        let decided = name.utf8.withContiguousStorageIfAvailable { wanted -> String?? in
            guard !wanted.isEmpty, isASCII(wanted) else { return nil }
            var found: String?
            for (key, value) in fields {
                let matches = key.utf8.withContiguousStorageIfAvailable { bytes -> Bool? in
                    guard isASCII(bytes) else { return nil }
                    // Both ASCII: `asciiEqual` decides.
                    return bytes.count == wanted.count && HTTPFieldName.asciiEqual(bytes, wanted) == true
                }
                guard let matches = matches ?? nil else { return nil }
                guard matches else { continue }
                if found != nil { return nil }
                found = value
            }
            return .some(found)
        }
        return decided ?? nil
    }

    /// Whether every byte is ASCII.
    private static func isASCII(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        var bits: UInt8 = 0
        for byte in bytes { bits |= byte }
        return bits < 0x80
    }
}
