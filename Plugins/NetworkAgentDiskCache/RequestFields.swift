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
    private struct Field {
        let name: String
        let value: String
        /// The name's UTF-8 length, or -1 when it is not ASCII.
        let asciiLength: Int
    }

    private let fields: [String: String]
    private let list: [Field]

    init(_ request: URLRequest) {
        fields = request.allHTTPHeaderFields ?? [:]
        list = fields.map { name, value in
            Field(name: name, value: value, asciiLength: name.utf8.allSatisfy { $0 < 0x80 } ? name.utf8.count : -1)
        }
    }

    /// The value of the field called `name` in any case, or `nil`.
    func value(_ name: String) -> String? {
        if let exact = fields[name] { return exact }
        let length = name.utf8.allSatisfy { $0 < 0x80 } ? name.utf8.count : -1
        for field in list {
            // ASCII names of different lengths never match (HTTPFieldName.equal's own rule); others go through it.
            if length >= 0, field.asciiLength >= 0, field.asciiLength != length { continue }
            if HTTPFieldName.equal(field.name, name) { return field.value }
        }
        return nil
    }

    /// Whether the request has any of `names`.
    func containsAny(of names: [String]) -> Bool {
        names.contains { value($0) != nil }
    }
}
