import Foundation

/// What a ``LoopbackServer`` handler answers: a status, headers, a body, and optionally a delay or a fault.
///
/// Framing headers are added unless the handler set them: `Content-Length` for a ``Body/data(_:)`` body and
/// `Transfer-Encoding: chunked` for a ``Body/chunked(_:interval:)`` body. When the handler sets `Content-Length` or
/// `Transfer-Encoding` itself on a `.data` body, the bytes go out verbatim, so a test can send a wrong length or
/// hand-made chunked framing. Responses to `HEAD`, and `1xx`, `204` and `304` responses, carry no body.
public struct ServerResponse: Sendable {
    /// The response body.
    public enum Body: Sendable {
        /// A body sent at once.
        case data(Data)
        /// A body sent piece by piece, pausing `interval` between pieces.
        ///
        /// Each non-empty piece becomes one chunk of a `Transfer-Encoding: chunked` body (empty pieces only pause).
        /// If the handler set `Content-Length`, the pieces are written raw, unframed, one after the other.
        case chunked([Data], interval: Duration)
    }

    /// A way to misbehave instead of answering properly. Every fault ends by closing the connection, except
    /// ``oversizedHeaders(bytes:)``, which is a well-formed (if huge) response.
    public enum Fault: Sendable {
        /// Read the request, then close the connection without answering.
        case closeBeforeResponse
        /// Read the request, then reset the connection (`SO_LINGER` 0, then close: the peer sees RST).
        case resetBeforeResponse
        /// Send the headers (with the full `Content-Length`) and the first `afterBytes` body bytes, then close.
        case closeMidBody(afterBytes: Int)
        /// Send the headers (with the full `Content-Length`) and the first `afterBytes` body bytes, then reset.
        case resetMidBody(afterBytes: Int)
        /// Send the headers and the body as chunks, then close without the final zero-length chunk.
        case truncatedChunked
        /// Never answer, until the server stops or the client goes away.
        case stall
        /// Send garbage instead of a status line, then close.
        case malformedStatusLine
        /// Answer normally, but with a response header block (status line to blank line) of about `bytes` bytes,
        /// padded with `X-Padding-N` headers of at most 8 KiB each.
        case oversizedHeaders(bytes: Int)
    }

    /// The status code.
    public var status: Int
    /// The header fields, in the order they are sent.
    public var headers: [(name: String, value: String)]
    /// The body.
    public var body: Body
    /// How long to wait before writing anything (cut short when the server stops or the client goes away).
    public var delay: Duration
    /// A fault to inject instead of (or into) the normal answer.
    public var fault: Fault?

    /// Creates a response.
    ///
    /// - Parameters:
    ///   - status: The status code; 200 by default.
    ///   - headers: The header fields, in the order they are sent.
    ///   - body: The body; empty by default.
    ///   - delay: How long to wait before writing anything.
    ///   - fault: A fault to inject; `nil` answers normally.
    public init(
        status: Int = 200,
        headers: [(name: String, value: String)] = [],
        body: Body = .data(Data()),
        delay: Duration = .zero,
        fault: Fault? = nil
    ) {
        self.status = status
        self.headers = headers
        self.body = body
        self.delay = delay
        self.fault = fault
    }

    /// A UTF-8 text response with `Content-Type: text/plain; charset=utf-8` (unless `headers` sets a content type).
    ///
    /// - Parameters:
    ///   - text: The body, sent as UTF-8.
    ///   - status: The status code; 200 by default.
    ///   - headers: More header fields.
    /// - Returns: The response.
    public static func text(
        _ text: String,
        status: Int = 200,
        headers: [(name: String, value: String)] = []
    ) -> ServerResponse {
        ServerResponse(
            status: status,
            headers: withContentType("text/plain; charset=utf-8", headers),
            body: .data(Data(text.utf8))
        )
    }

    /// A JSON response with `Content-Type: application/json` (unless `headers` sets a content type).
    ///
    /// - Parameters:
    ///   - data: The JSON bytes.
    ///   - status: The status code; 200 by default.
    ///   - headers: More header fields.
    /// - Returns: The response.
    public static func json(
        _ data: Data,
        status: Int = 200,
        headers: [(name: String, value: String)] = []
    ) -> ServerResponse {
        ServerResponse(
            status: status,
            headers: withContentType("application/json", headers),
            body: .data(data)
        )
    }

    /// The value of the first header field with this name, compared case-insensitively.
    ///
    /// - Parameter name: The header field name.
    /// - Returns: The first value, or `nil` when the response has no such field.
    public func header(_ name: String) -> String? {
        headers.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value
    }

    private static func withContentType(
        _ contentType: String,
        _ headers: [(name: String, value: String)]
    ) -> [(name: String, value: String)] {
        let hasContentType = headers.contains { $0.name.caseInsensitiveCompare("Content-Type") == .orderedSame }
        return hasContentType ? headers : [("Content-Type", contentType)] + headers
    }
}
