import Foundation
import NetworkAgent

extension RedactionPolicy {
    /// The URL as text with the values of redacted query parameters and any password replaced by the placeholder.
    func redactedString(for url: URL?) -> String {
        guard let url else { return "<no URL>" }
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: true) else {
            return url.absoluteString
        }
        let query = components.percentEncodedQuery
        let fragment = components.percentEncodedFragment
        let user = components.percentEncodedUser
        let hasPassword = redactsURLPassword && components.percentEncodedPassword != nil
        components.percentEncodedQuery = nil
        components.percentEncodedFragment = nil
        if hasPassword { components.percentEncodedPassword = nil }
        guard var text = components.string else { return "<unprintable URL>" }
        if hasPassword, let user, let range = text.range(of: "://" + user + "@") {
            text.replaceSubrange(range, with: "://" + user + ":" + Self.placeholder + "@")
        }
        if let query { text += "?" + redactedQuery(query) }
        if let fragment { text += "#" + fragment }
        return text
    }

    /// A percent-encoded query or form body with the values of redacted parameters replaced, everything else kept
    /// byte for byte.
    func redactedQuery(_ query: String) -> String {
        query.split(separator: "&", omittingEmptySubsequences: false).map { item -> String in
            guard let equals = item.firstIndex(of: "=") else { return String(item) }
            let rawName = item[..<equals]
            let plus = rawName.replacingOccurrences(of: "+", with: " ")
            let name = plus.removingPercentEncoding ?? plus
            return redactsQueryParameter(name) ? rawName + "=" + Self.placeholder : String(item)
        }
        .joined(separator: "&")
    }

    /// Header fields as `(name, value)` pairs sorted by name, redacted values replaced.
    func redactedHeaders(_ headers: [String: String]) -> [(name: String, value: String)] {
        headers.sorted { $0.key.lowercased() < $1.key.lowercased() }
            .map { (name: $0.key, value: redactsHeader($0.key) ? Self.placeholder : $0.value) }
    }

    /// A JSON value with the values of redacted fields replaced at any depth, and whether anything was replaced.
    func redactedJSON(_ value: Any) -> (value: Any, changed: Bool) {
        if let object = value as? [String: Any] {
            var changed = false
            var result: [String: Any] = [:]
            for (key, member) in object {
                if redactsBodyField(key) {
                    result[key] = Self.placeholder
                    changed = true
                } else {
                    let redacted = redactedJSON(member)
                    result[key] = redacted.value
                    changed = changed || redacted.changed
                }
            }
            return (result, changed)
        }
        if let array = value as? [Any] {
            var changed = false
            let result = array.map { element -> Any in
                let redacted = redactedJSON(element)
                changed = changed || redacted.changed
                return redacted.value
            }
            return (result, changed)
        }
        return (value, false)
    }

    /// An event attribute value, hidden when its key names a secret (attributes should never carry one).
    func redactedAttribute(key: String, value: String) -> String {
        redactsQueryParameter(key) || redactsHeader(key) || redactsBodyField(key) ? Self.placeholder : value
    }
}
