import Foundation

/// The `key=value&…` encoding shared by URL queries and form bodies; see ``HTTPURLEncoding`` for the rules.
enum URLEncodedForm {
    /// Encodes attributes as a query string without the leading `?`, keys sorted.
    static func encode(_ attributes: [String: any Sendable]) -> String {
        var pairs: [(String, String)] = []
        for key in attributes.keys.sorted() {
            append(attributes[key] as Any, key: key, to: &pairs)
        }
        return pairs.map { PercentEncoding.encode($0.0) + "=" + PercentEncoding.encode($0.1) }.joined(separator: "&")
    }

    private static func append(_ value: Any, key: String, to pairs: inout [(String, String)]) {
        guard let value = unwrap(value) else { return }
        switch value {
        case let dictionary as [String: Any]:
            for subkey in dictionary.keys.sorted() {
                append(dictionary[subkey] as Any, key: "\(key)[\(subkey)]", to: &pairs)
            }
        case let array as [Any]:
            for element in array { append(element, key: key, to: &pairs) }
        case let bool as Bool:
            pairs.append((key, bool ? "true" : "false"))
        case is NSNull:
            pairs.append((key, ""))
        default:
            pairs.append((key, "\(value)"))
        }
    }

    /// The wrapped value of an `Optional`, `nil` for `.none`, the value itself otherwise.
    private static func unwrap(_ value: Any) -> Any? {
        let mirror = Mirror(reflecting: value)
        guard mirror.displayStyle == .optional else { return value }
        guard let child = mirror.children.first else { return nil }
        return unwrap(child.value)
    }
}
