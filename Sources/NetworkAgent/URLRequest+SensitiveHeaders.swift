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
        // Room for the field and the mark at once: the copy of the request's fields is made with it, instead of
        // being made and then grown by the insertions.
        fields.reserveCapacity(fields.count + 2)
        if isAbsent {
            fields[HTTPFieldName.canonical(name)] = value
        } else {
            HTTPFieldName.set(value, for: name, in: &fields)
        }
        if let marked = HTTPFieldName.value(of: Self.sensitiveHeadersField, in: fields) {
            var names = SensitiveHeaderList.names(in: marked)
            names.insert(name)
            HTTPFieldName.set(SensitiveHeaderList.field(of: names), for: Self.sensitiveHeadersField, in: &fields)
        } else if let field = SensitiveHeaderList.field(of: name) {
            // No mark under any spelling: the new one is filed as `setHeaderField` files it, without searching.
            fields[Self.sensitiveHeadersFieldSpelling] = field
        }
        allHTTPHeaderFields = fields
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
        let trimmed = name.trimmingWhitespace()
        return trimmed.utf8.contains(where: { $0 >= 0x41 && $0 <= 0x5a || $0 >= 0x80 }) ? trimmed.lowercased() : trimmed
    }
}
