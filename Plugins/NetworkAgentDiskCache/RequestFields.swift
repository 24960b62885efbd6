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

    init(_ request: URLRequest) {
        fields = request.allHTTPHeaderFields ?? [:]
    }

    /// The value of the field called `name` in any case, or `nil`.
    func value(_ name: String) -> String? {
        if let exact = fields[name] { return exact }
        let count = name.utf8.count
        let isASCII = name.utf8.allSatisfy { $0 < 0x80 }
        for (key, value) in fields {
            // ASCII names of different lengths never match (HTTPFieldName.equal's own rule); others go through it.
            if isASCII, key.utf8.count != count, key.utf8.allSatisfy({ $0 < 0x80 }) { continue }
            if HTTPFieldName.equal(key, name) { return value }
        }
        return nil
    }

    /// Whether the request has any of `names`.
    func containsAny(of names: [String]) -> Bool {
        names.contains { value($0) != nil }
    }
}
