import Foundation
import NetworkAgent

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension RedactionPolicy {
    /// The URL as text with the values of redacted query parameters and any password replaced by the placeholder.
    func redactedString(for url: URL?) -> String {
        guard let url else { return "<no URL>" }
        // Without a query, a fragment or user info there is nothing to redact, and the text is the URL's own (the
        // parse below would rebuild the same string; the logging plugin shows a URL in every record).
        let absolute = url.absoluteString
        return Self.isShownAsIs(absolute) ? absolute : parsedRedactedString(for: url)
    }

    /// Whether `URLComponents` gives back a URL's text unchanged and nothing in it needs redacting: no query,
    /// fragment or user info, and a port (if any) written as `URLComponents` writes it (digits, no leading zero;
    /// it drops an empty one and rewrites `:080` as `:80`).
    static func isShownAsIs(_ text: String) -> Bool {
        let bytes = text.utf8
        guard !bytes.contains(where: { $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") || $0 == UInt8(ascii: "@") }),
            let separator = schemeSeparator(in: text[...])
        else { return false }
        let rest = bytes[separator.upperBound...]
        var authority = rest[..<(rest.firstIndex(of: UInt8(ascii: "/")) ?? rest.endIndex)]
        if authority.first == UInt8(ascii: "[") {
            guard let close = authority.firstIndex(of: UInt8(ascii: "]")) else { return false }
            authority = authority[authority.index(after: close)...]
            guard authority.isEmpty || authority.first == UInt8(ascii: ":") else { return false }
        }
        guard let colon = authority.lastIndex(of: UInt8(ascii: ":")) else { return true }
        let port = authority[authority.index(after: colon)...]
        return !port.isEmpty && port.allSatisfy { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
            && (port.count == 1 || port.first != UInt8(ascii: "0"))
    }

    /// ``redactedString(for:)`` through `URLComponents`, for any URL.
    func parsedRedactedString(for url: URL) -> String {
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

    /// Header fields as `(name, value)` pairs sorted by name: the values of redacted headers and of `sensitive` ones
    /// (lowercased names the request marked) replaced, URLs and secret parameters in the others redacted (a
    /// `Location` header), and the request's sensitive-headers mark left out (it is never sent).
    func redactedHeaders(
        _ headers: [String: String],
        sensitive: Set<String> = []
    ) -> [(name: String, value: String)] {
        let mark = URLRequest.sensitiveHeadersField.lowercased()
        return headers.filter { $0.key.lowercased() != mark }
            .sorted { $0.key.lowercased() < $1.key.lowercased() }
            .map { name, value in
                let hidden = redactsHeader(name) || sensitive.contains(name.lowercased())
                return (name: name, value: hidden ? Self.placeholder : redactedText(value))
            }
    }

    /// Free text (an error message, a header value, a text body) with every secret parameter's value and every URL
    /// password replaced: `name=value` pairs whose name is a redacted query parameter, at the start of the text or
    /// after `?`, `&`, `;`, white space, a quote or a bracket, lose their value up to the next `&`, `#`, white space,
    /// quote or angle bracket; `scheme://user:password@` loses its password.
    func redactedText(_ text: String) -> String {
        // A parameter is redacted only where `name=` appears: text without `=` (a number, a plain message) is kept
        // without the scalar-by-scalar pass.
        let hasPairs = text.utf8.contains(UInt8(ascii: "="))
        let parameters = queryParameterNames.isEmpty || !hasPairs ? text : redactedParameters(in: text)
        return redactsURLPassword ? Self.redactedPasswords(in: parameters) : parameters
    }

    private static let pairBoundaries: Set<Unicode.Scalar> = [
        "?", "&", ";", " ", "\t", "\n", "\r", "\"", "'", "(", "[", "{", "<", ",",
    ]
    private static let valueEnds: Set<Unicode.Scalar> = ["&", "#", " ", "\t", "\n", "\r", "\"", "'", "<", ">"]
    private static let nameEnds: Set<Unicode.Scalar> = valueEnds.union(["=", "?", "/", ":", "@"])

    private func redactedParameters(in text: String) -> String {
        let scalars = Array(text.unicodeScalars)
        var output = String.UnicodeScalarView()
        var index = 0
        while index < scalars.count {
            let atBoundary = index == 0 || Self.pairBoundaries.contains(scalars[index - 1])
            guard atBoundary else {
                output.append(scalars[index])
                index += 1
                continue
            }
            var nameEnd = index
            while nameEnd < scalars.count, !Self.nameEnds.contains(scalars[nameEnd]) { nameEnd += 1 }
            guard nameEnd > index, nameEnd < scalars.count, scalars[nameEnd] == "=" else {
                output.append(scalars[index])
                index += 1
                continue
            }
            var rawName = String.UnicodeScalarView()
            rawName.append(contentsOf: scalars[index..<nameEnd])
            let plus = String(rawName).replacingOccurrences(of: "+", with: " ")
            guard redactsQueryParameter(plus.removingPercentEncoding ?? plus) else {
                output.append(contentsOf: scalars[index...nameEnd])
                index = nameEnd + 1
                continue
            }
            output.append(contentsOf: rawName)
            output.append(contentsOf: ("=" + Self.placeholder).unicodeScalars)
            index = nameEnd + 1
            while index < scalars.count, !Self.valueEnds.contains(scalars[index]) { index += 1 }
        }
        return String(output)
    }

    /// Text with the password of every `scheme://user:password@host` replaced.
    private static func redactedPasswords(in text: String) -> String {
        let ascii = text.utf8.allSatisfy { $0 < 0x80 }
        guard ascii ? schemeSeparator(in: text[...]) != nil : text.contains("://") else { return text }
        var result = ""
        var rest = Substring(text)
        while let separator = schemeSeparator(in: rest) {
            result += rest[..<separator.upperBound]
            rest = rest[separator.upperBound...]
            let authorityEnd =
                rest.unicodeScalars.firstIndex { "/?#".unicodeScalars.contains($0) || valueEnds.contains($0) }
                ?? rest.endIndex
            let authority = rest[..<authorityEnd]
            guard let at = authority.lastIndex(of: "@"), let colon = authority[..<at].firstIndex(of: ":") else {
                continue
            }
            result += authority[...colon] + placeholder
            rest = rest[at...]
        }
        return result + rest
    }

    /// The first `://` in `text`, as `text.range(of: "://")` finds it. Every URL and every event attribute that a
    /// record shows is searched for it: ASCII text (there Foundation's search matches bytes) is searched on its bytes,
    /// other text through Foundation.
    static func schemeSeparator(in text: Substring) -> Range<String.Index>? {
        // The offset of the first `://`, -1 for none, -2 for text that is not ASCII.
        let offset = text.utf8.withContiguousStorageIfAvailable { bytes -> Int in
            var found = -1
            for index in bytes.indices {
                let byte = bytes[index]
                if byte >= 0x80 { return -2 }
                if found < 0, byte == UInt8(ascii: ":"), index + 2 < bytes.count, bytes[index + 1] == UInt8(ascii: "/"),
                    bytes[index + 2] == UInt8(ascii: "/")
                {
                    found = index
                }
            }
            return found
        }
        switch offset {
        case .some(-1): return nil
        case let start? where start >= 0:
            let lower = text.utf8.index(text.startIndex, offsetBy: start)
            return lower..<text.utf8.index(lower, offsetBy: 3)
        default: return text.range(of: "://")
        }
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

    /// An event attribute value, hidden when its key names a secret (attributes should never carry one), its URLs
    /// and secret parameters redacted otherwise.
    func redactedAttribute(key: String, value: String) -> String {
        redactsQueryParameter(key) || redactsHeader(key) || redactsBodyField(key)
            ? Self.placeholder : redactedText(value)
    }
}
