import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension URLRequest {
    /// The header field that carries ``sensitiveHeaderNames`` through the plugin chain to the transport, which
    /// removes it before sending: `NetworkAgent-Sensitive-Headers`.
    package static let sensitiveHeadersField = "NetworkAgent-Sensitive-Headers"

    /// The name under which `setHeaderField` files a new ``sensitiveHeadersField``
    /// (``HTTPFieldName/canonical(_:)``), worked out once.
    static let sensitiveHeadersFieldSpelling = HTTPFieldName.canonical(sensitiveHeadersField)

    /// Names of header fields (lowercased) whose values are secrets, besides `Authorization`, `Cookie` and
    /// `Proxy-Authorization`, which always are.
    ///
    /// ``URLSessionTransport`` removes these headers when a redirect leaves the request's origin (RFC 6454: scheme,
    /// host and port) or goes from `https` to `http`, and the logging plugin redacts their values. The auth plugin
    /// marks every credential header it adds; ``NetworkAgentConfiguration/sensitiveHeaders`` marks headers on every
    /// request of an agent; mark one request's own headers with `request.sensitiveHeaderNames.insert("X-Session")`.
    ///
    /// The names travel with the request in a `NetworkAgent-Sensitive-Headers` field, so that they survive every
    /// plugin that copies or changes the request and every side request made from it; ``URLSessionTransport`` never
    /// sends that field. A custom ``HTTPTransport`` reads the names, then sets this property to `[]` before sending.
    public var sensitiveHeaderNames: Set<String> {
        get {
            guard let field = headerField(Self.sensitiveHeadersField) else { return [] }
            return SensitiveHeaderList.names(in: field)
        }
        set {
            setHeaderField(SensitiveHeaderList.field(of: newValue), for: Self.sensitiveHeadersField)
        }
    }

    /// Sets a header field and marks it sensitive in one change of the request's fields, with the result of
    /// `setHeaderField(value, for: name)` followed by `sensitiveHeaderNames.insert(name)`: each of those rewrites the
    /// whole field dictionary, and the auth plugin does both on every request.
    ///
    /// - Parameters:
    ///   - value: The field's value.
    ///   - name: The field name, in any case.
    ///   - isAbsent: The caller has just found no field `name` in any case (the auth plugin has): the field is
    ///     filed without searching for another case of it to replace. Leave it `false` otherwise.
    package mutating func setSensitiveHeaderField(_ value: String, for name: String, isAbsent: Bool = false) {
        var fields = allHTTPHeaderFields ?? [:]
        // The request lets go of its dictionary, so `fields` is the only reference and changes in place (grown by
        // the insertions, moving the fields) instead of being copied first. A request that shares its storage with
        // a copy of it gets storage of its own here, as with any change. (No `reserveCapacity`: it is not
        // specialised, and its generic resize looked up the storage's type metadata on every call, ~40 % of it.)
        allHTTPHeaderFields = nil
        if isAbsent {
            fields[HTTPFieldName.canonical(name)] = value
        } else {
            HTTPFieldName.set(value, for: name, in: &fields)
        }
        if Self.hasMark(in: fields), let marked = HTTPFieldName.value(of: Self.sensitiveHeadersField, in: fields) {
            var names = SensitiveHeaderList.names(in: marked)
            names.insert(name)
            HTTPFieldName.set(SensitiveHeaderList.field(of: names), for: Self.sensitiveHeadersField, in: &fields)
        } else if let field = SensitiveHeaderList.field(of: name) {
            // No mark under any spelling: the new one is filed as `setHeaderField` files it, without searching.
            fields[Self.sensitiveHeadersFieldSpelling] = field
        }
        allHTTPHeaderFields = fields
    }

    /// Whether `fields` has a ``sensitiveHeadersField`` in any case, as `HTTPFieldName.value(of:in:)` would find it.
    ///
    /// Most requests have no mark when the auth plugin files its credential, and finding that out compared every
    /// field name with the mark's. The mark's name is ASCII, so a name of another length can equal it without
    /// case only if it is not ASCII (a lowercase form of another length, such as the Kelvin sign's `k`): only
    /// names of the same length, or with a byte above 0x7F, are compared.
    static func hasMark(in fields: [String: String]) -> Bool {
        let length = sensitiveHeadersField.utf8.count
        for name in fields.keys {
            let bytes = name.utf8
            if bytes.count == length || bytes.contains(where: { $0 >= 0x80 }),
                HTTPFieldName.equal(name, sensitiveHeadersField)
            {
                return true
            }
        }
        return false
    }
}

/// The text of the `NetworkAgent-Sensitive-Headers` field: lowercased names, trimmed of white space, sorted and
/// joined by `, `.
enum SensitiveHeaderList {
    /// The field's value for the one name `name` (the set version of `field(of:)` for `[name]`, without the set).
    static func field(of name: String) -> String? {
        let normal = normalized(name[...])
        return normal.isEmpty ? nil : normal
    }

    /// ``normalized(_:)`` of an ASCII name, worked out on its bytes in one pass (trimmed of spaces and tabs, `A`–`Z`
    /// lowered): the auth plugin marks `Authorization` on every request. `nil` when a byte is not ASCII.
    private static func asciiNormalized(_ bytes: UnsafeBufferPointer<UInt8>) -> String? {
        var start = 0
        var end = bytes.count
        for byte in bytes where byte >= 0x80 { return nil }
        while start < end, bytes[start] == 0x20 || bytes[start] == 0x09 { start += 1 }
        while end > start, bytes[end - 1] == 0x20 || bytes[end - 1] == 0x09 { end -= 1 }
        return String(unsafeUninitializedCapacity: end - start) { out in
            for index in 0..<(end - start) {
                let byte = bytes[start + index]
                out[index] = byte >= 0x41 && byte <= 0x5a ? byte | 0x20 : byte
            }
            return end - start
        }
    }

    /// The names in a field's value (lowercased, trimmed, empty ones left out).
    static func names(in field: String) -> Set<String> {
        var names = Set<String>()
        for part in field.split(separator: ",") {
            let name = normalized(part)
            if !name.isEmpty { names.insert(name) }
        }
        return names
    }

    /// The field's value for `names`, or `nil` when none is left after normalising.
    static func field(of names: Set<String>) -> String? {
        if names.count == 1, let only = names.first { return field(of: only) }
        let normal = names.map { normalized($0[...]) }.filter { !$0.isEmpty }
        return normal.isEmpty ? nil : normal.sorted().joined(separator: ", ")
    }

    /// `name.trimmingCharacters(in: .whitespaces).lowercased()`, without Foundation for ASCII names (in ASCII,
    /// `.whitespaces` is the space and the tab).
    static func normalized(_ name: Substring) -> String {
        if let ascii = name.utf8.withContiguousStorageIfAvailable(asciiNormalized), let ascii { return ascii }
        let trimmed = name.trimmingWhitespace()
        return trimmed.utf8.contains(where: { $0 >= 0x41 && $0 <= 0x5a || $0 >= 0x80 }) ? trimmed.lowercased() : trimmed
    }
}
