import Foundation
import NetworkAgent

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The default file name a cURL command reads a binary or streamed body from: `body.bin`.
public let defaultCURLBodyFileName = "body.bin"

/// A shell command that reproduces a request with cURL, for pasting into a terminal or a bug report.
///
/// Every argument is single-quoted for POSIX shells (a `'` inside becomes `'\''`), so quotes, `$`, backslashes and
/// newlines are passed literally. Text bodies are inlined with `--data-raw`; binary bodies (non-UTF-8, control
/// characters, binary media types) and streamed bodies are referenced as `--data-binary @<bodyFileName>` rather
/// than inlined, so save the body to that file first.
///
/// ```swift
/// print(curlCommand(for: request))               // secrets print as <redacted>
/// print(curlCommand(for: request, redaction: nil)) // secrets in clear: never log this one
/// ```
///
/// - Parameters:
///   - request: The request to reproduce.
///   - redaction: What to hide: headers, query parameters, form fields and JSON body fields print as
///     `<redacted>`. Defaults to ``RedactionPolicy/init()``; `nil` prints every value as it is.
///   - bodyFileName: The file a binary or streamed body is read from; defaults to ``defaultCURLBodyFileName``.
/// - Returns: The command, one argument per line, joined with ` \` line continuations.
public func curlCommand(
    for request: URLRequest,
    redaction: RedactionPolicy? = RedactionPolicy(),
    bodyFileName: String = defaultCURLBodyFileName
) -> String {
    let method = request.httpMethod ?? "GET"
    let policy = redaction ?? RedactionPolicy.revealingEverything
    var arguments = [shellQuoted(policy.redactedString(for: request.url))]
    let body = request.httpBody ?? Data()
    let streamed = request.httpBodyStream != nil
    if method == "HEAD" {
        arguments.append("--head")
    } else if method != "GET" || !body.isEmpty || streamed {
        arguments.append("-X " + shellQuoted(method))
    }
    let sensitive = redaction == nil ? [] : request.sensitiveHeaderNames
    for header in policy.redactedHeaders(request.allHTTPHeaderFields ?? [:], sensitive: sensitive) {
        arguments.append("-H " + shellQuoted("\(header.name): \(header.value)"))
    }
    if streamed {
        arguments.append("--data-binary " + shellQuoted("@" + bodyFileName))
    } else if !body.isEmpty {
        let renderer = BodyRenderer(policy: policy, limit: nil, prettyPrintsJSON: false)
        switch renderer.rendition(of: body, contentType: request.value(forHTTPHeaderField: "Content-Type")) {
        case .text(let text): arguments.append("--data-raw " + shellQuoted(text))
        case .summary: arguments.append("--data-binary " + shellQuoted("@" + bodyFileName))
        }
    }
    return "curl " + arguments.joined(separator: " \\\n  ")
}

/// A single-quoted POSIX shell word: everything between the quotes is literal; a `'` becomes `'\''`.
func shellQuoted(_ text: String) -> String {
    "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
}

extension RedactionPolicy {
    /// A policy that hides nothing, for commands the caller explicitly asked to keep secrets in.
    static let revealingEverything: RedactionPolicy = {
        var policy = RedactionPolicy()
        policy.headerNames = []
        policy.queryParameterNames = []
        policy.bodyFieldNames = []
        policy.redactsURLPassword = false
        return policy
    }()
}
