import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension URLRequest {
    /// The header field that carries ``sensitiveHeaderNames`` through the plugin chain to the transport, which
    /// removes it before sending: `NetworkAgent-Sensitive-Headers`.
    package static let sensitiveHeadersField = "NetworkAgent-Sensitive-Headers"

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
            let names = field.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
            return Set(names.filter { !$0.isEmpty })
        }
        set {
            let names = newValue.map { $0.trimmingCharacters(in: .whitespaces).lowercased() }.filter { !$0.isEmpty }
            setHeaderField(
                names.isEmpty ? nil : names.sorted().joined(separator: ", "),
                for: Self.sensitiveHeadersField
            )
        }
    }
}
