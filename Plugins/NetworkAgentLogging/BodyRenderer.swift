import Foundation
import NetworkAgent

/// Turns a request or response body into printable text: redacted, optionally pretty-printed, capped in size;
/// binary and multipart bodies summarised rather than dumped.
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
        if mediaType == "application/x-www-form-urlencoded" {
            return .text(policy.redactedQuery(text))
        }
        if Self.isJSONType(mediaType) || Self.looksLikeJSON(text) {
            return renderJSON(data, text: text, declared: Self.isJSONType(mediaType))
        }
        return .text(text)
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

    private func renderJSON(_ data: Data, text: String, declared: Bool) -> Rendition {
        guard data.count <= Self.maximumParsedJSONBytes else {
            return policy.bodyFieldNames.isEmpty
                ? .text(text) : .summary("(JSON body, \(data.count) bytes, too large to redact)")
        }
        guard let object = try? JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed]) else {
            return .text(text)
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
