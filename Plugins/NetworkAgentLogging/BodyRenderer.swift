import Foundation
import NetworkAgent

/// Turns a request or response body into printable text: redacted, optionally pretty-printed, capped in size;
/// binary and multipart bodies summarised rather than dumped.
///
/// Redaction fails closed: a body is printed only through a redactor that knows its type, and one that redactor
/// cannot parse is summarised as its type and size. JSON (`application/json`, `+json`, or no type and starting with
/// `{` or `[`) is parsed and its secret fields hidden; NDJSON line by line; form bodies field by field; `text/*`
/// through the free-text redactor (secret `name=value` pairs, URL passwords). Any other type, and untyped text that is
/// not JSON, is summarised. A policy that hides nothing (a cURL command with `redaction: nil`) prints text as it is.
struct BodyRenderer {
    /// JSON bodies larger than this are not parsed for redaction; they are summarised instead of printed.
    static let maximumParsedJSONBytes = 1 << 20

    let policy: RedactionPolicy
    /// The most UTF-8 bytes of body text printed; `nil` prints everything (cURL commands).
    let limit: Int?
    let prettyPrintsJSON: Bool

    /// What a body is, for printing.
    enum Rendition: Equatable {
        /// Printable text, redacted (and pretty-printed when asked), not yet capped.
        case text(String)
        /// Not printed: the summary says what it is.
        case summary(String)
    }

    /// Classifies and redacts a body.
    func rendition(of data: Data, contentType: String?) -> Rendition {
        let mediaType = Self.mediaType(contentType)
        if mediaType.hasPrefix("multipart/") {
            return .summary("(multipart body, \(data.count) bytes, not shown)")
        }
        let typeNote = mediaType.isEmpty ? "" : ", \(mediaType)"
        if Self.isBinaryType(mediaType) || data.starts(with: [0x1f, 0x8b]) {
            return .summary("(binary body, \(data.count) bytes\(typeNote))")
        }
        guard let text = String(data: data, encoding: .utf8), !Self.hasControlCharacters(text) else {
            return .summary("(binary body, \(data.count) bytes\(typeNote))")
        }
        if policy.hidesNothing {
            return .text(text)
        }
        if mediaType == "application/x-www-form-urlencoded" {
            return .text(policy.redactedQuery(text))
        }
        if Self.isJSONType(mediaType) || (mediaType.isEmpty && Self.looksLikeJSON(text)) {
            return renderJSON(data, text: text, mediaType: mediaType)
        }
        if Self.isNDJSONType(mediaType) {
            return renderNDJSON(text, mediaType: mediaType)
        }
        if mediaType.hasPrefix("text/") {
            if Self.looksLikeJSON(text), case .text(let json) = renderJSON(data, text: text, mediaType: mediaType) {
                return .text(json)
            }
            return .text(policy.redactedText(text))
        }
        return Self.unshown(data.count, mediaType: mediaType, reason: "no redactor for its type")
    }

    /// `(<type> body, <n> bytes, not shown: <reason>)`, or `(body of unknown type, <n> bytes, not shown)`.
    private static func unshown(_ count: Int, mediaType: String, reason: String) -> Rendition {
        mediaType.isEmpty
            ? .summary("(body of unknown type, \(count) bytes, not shown)")
            : .summary("(\(mediaType) body, \(count) bytes, not shown: \(reason))")
    }

    /// The lines to print for a body: the text capped at ``limit`` with the remainder counted, or the summary.
    func printable(_ data: Data, contentType: String?) -> String {
        switch rendition(of: data, contentType: contentType) {
        case .summary(let summary):
            return summary
        case .text(let text):
            guard let limit, text.utf8.count > limit else { return text }
            var shown = ""
            var bytes = 0
            for scalar in text.unicodeScalars {
                let size = String(scalar).utf8.count
                guard bytes + size <= limit else { break }
                shown.unicodeScalars.append(scalar)
                bytes += size
            }
            return shown + "… (\(text.utf8.count - bytes) more bytes)"
        }
    }

    private func renderJSON(_ data: Data, text: String, mediaType: String) -> Rendition {
        guard data.count <= Self.maximumParsedJSONBytes else {
            return policy.bodyFieldNames.isEmpty
                ? .text(text) : .summary("(JSON body, \(data.count) bytes, too large to redact)")
        }
        guard let object = try? JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed]) else {
            return Self.unshown(data.count, mediaType: mediaType.isEmpty ? "JSON" : mediaType, reason: "not valid JSON")
        }
        let (redacted, changed) = policy.redactedJSON(object)
        guard changed || prettyPrintsJSON else { return .text(text) }
        var options: JSONSerialization.WritingOptions = [.sortedKeys, .withoutEscapingSlashes, .fragmentsAllowed]
        if prettyPrintsJSON { options.insert(.prettyPrinted) }
        guard let output = try? JSONSerialization.data(withJSONObject: redacted, options: options) else {
            return .summary("(JSON body, \(data.count) bytes, not shown)")
        }
        return .text(String(decoding: output, as: UTF8.self))
    }

    /// Newline-delimited JSON, redacted line by line; one line that is not JSON summarises the whole body.
    private func renderNDJSON(_ text: String, mediaType: String) -> Rendition {
        let count = text.utf8.count
        guard count <= Self.maximumParsedJSONBytes else {
            return .summary("(\(mediaType) body, \(count) bytes, too large to redact)")
        }
        var lines: [String] = []
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            guard !line.allSatisfy(\.isWhitespace) else {
                lines.append(String(line))
                continue
            }
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8), options: [.fragmentsAllowed])
            else {
                return Self.unshown(count, mediaType: mediaType, reason: "a line is not valid JSON")
            }
            let (redacted, changed) = policy.redactedJSON(object)
            guard changed else {
                lines.append(String(line))
                continue
            }
            let options: JSONSerialization.WritingOptions = [.sortedKeys, .withoutEscapingSlashes, .fragmentsAllowed]
            guard let output = try? JSONSerialization.data(withJSONObject: redacted, options: options) else {
                return Self.unshown(count, mediaType: mediaType, reason: "a line cannot be printed")
            }
            lines.append(String(decoding: output, as: UTF8.self))
        }
        return .text(lines.joined(separator: "\n"))
    }

    /// Media types of newline-delimited JSON.
    static func isNDJSONType(_ mediaType: String) -> Bool {
        [
            "application/x-ndjson", "application/ndjson", "application/jsonl", "application/x-jsonlines",
            "application/jsonlines",
        ].contains(mediaType)
    }

    /// The media type of a `Content-Type`, lowercased, without parameters.
    static func mediaType(_ contentType: String?) -> String {
        guard let contentType else { return "" }
        let type = contentType.split(separator: ";", maxSplits: 1).first.map(String.init) ?? ""
        return type.trimmingCharacters(in: .whitespaces).lowercased()
    }

    static func isJSONType(_ mediaType: String) -> Bool {
        mediaType == "application/json" || mediaType.hasSuffix("+json")
    }

    private static func looksLikeJSON(_ text: String) -> Bool {
        guard let first = text.first(where: { !$0.isWhitespace }) else { return false }
        return first == "{" || first == "["
    }

    private static let binaryTypePrefixes = ["image/", "audio/", "video/", "font/"]
    private static let binaryTypes: Set<String> = [
        "application/octet-stream", "application/pdf", "application/zip", "application/gzip", "application/x-gzip",
        "application/x-tar", "application/x-7z-compressed", "application/x-protobuf", "application/protobuf",
        "application/vnd.google.protobuf", "application/grpc", "application/wasm", "application/msgpack",
        "application/x-msgpack", "application/cbor",
    ]

    /// Media types whose bodies are binary by nature (SVG images are text and are printed).
    static func isBinaryType(_ mediaType: String) -> Bool {
        if mediaType == "image/svg+xml" { return false }
        return binaryTypes.contains(mediaType) || binaryTypePrefixes.contains { mediaType.hasPrefix($0) }
    }

    /// Control characters other than tab, line feed and carriage return mark a body as binary.
    static func hasControlCharacters(_ text: String) -> Bool {
        text.unicodeScalars.contains { scalar in
            (scalar.value < 0x20 && scalar != "\t" && scalar != "\n" && scalar != "\r") || scalar.value == 0x7f
        }
    }
}
