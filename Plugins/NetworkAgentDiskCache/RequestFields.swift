import Foundation
import NetworkAgent

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A request's header fields, taken out of the `URLRequest` once for the dozen lookups the cache makes per request
/// (`Range`, the conditional headers, `Cache-Control`, `Pragma`, the credential headers). Each lookup gives what the
/// core's `URLRequest.headerField(_:)` gives (Foundation's answer: names compared without case), without copying
/// the fields out of the request and re-checking every name's bytes on each call.
struct RequestFields {
    private let fields: [String: String]
    /// The lengths of the request's field names, one bit per UTF-8 length (bit `n` for `n` bytes, bit 63 for 63 and
    /// more); every bit set when a name is not ASCII. A name whose length has no bit cannot be among the fields,
    /// so most lookups (a request rarely has `Range`, `If-None-Match`, `Pragma`…) end without hashing or comparing
    /// a name. (No list of the names with their lengths is kept beside the fields: it was an array per request, and
    /// the few lookups that get past the bits tell names of other lengths apart by a check that both are ASCII.)
    private let lengths: UInt64

    init(_ request: URLRequest) {
        fields = request.allHTTPHeaderFields ?? [:]
        var lengths: UInt64 = 0
        for name in fields.keys {
            let length = Self.asciiLength(name)
            lengths |= length >= 0 ? Self.bit(length) : ~0
        }
        self.lengths = lengths
    }

    /// The value of the field called `name` in any case, or `nil`.
    func value(_ name: String) -> String? {
        let length = Self.asciiLength(name)
        // An ASCII name matches only a field name of its own length (HTTPFieldName.equal's rule), exact or not.
        if length >= 0, lengths & Self.bit(length) == 0 { return nil }
        if let exact = fields[name] { return exact }
        // HTTPFieldName.equal rules out names of different lengths once it has seen both are ASCII.
        for (fieldName, value) in fields where HTTPFieldName.equal(fieldName, name) { return value }
        return nil
    }

    /// Whether the request has any of `names`.
    func containsAny(of names: [String]) -> Bool {
        names.contains { value($0) != nil }
    }

    /// Whether the request has a field called `name` in any case.
    func contains(_ name: String) -> Bool {
        value(name) != nil
    }

    /// A name's UTF-8 length, or -1 when it is not ASCII.
    private static func asciiLength(_ name: String) -> Int {
        let utf8 = name.utf8
        let contiguous = utf8.withContiguousStorageIfAvailable { bytes in
            bytes.allSatisfy { $0 < 0x80 } ? bytes.count : -1
        }
        return contiguous ?? (utf8.allSatisfy { $0 < 0x80 } ? utf8.count : -1)
    }

    /// The bit of ``lengths`` for an ASCII name of `length` bytes.
    private static func bit(_ length: Int) -> UInt64 {
        1 << UInt64(min(length, 63))
    }
}
