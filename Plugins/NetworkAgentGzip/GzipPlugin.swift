import Foundation
public import NetworkAgent

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Compresses request bodies with gzip and decodes gzip and deflate responses the transport left encoded.
///
/// Register it with `.gzip()`. What it does, in the two places it hooks into the chain:
///
/// - **Requests** (`onRequest`, once per call, so retries re-send the same compressed body): a body of at least
///   ``minimumBodySize`` bytes, with a compressible `Content-Type` (``isCompressible(contentType:)``) and no
///   `Content-Encoding`, is gzip-compressed at ``level`` and sent with `Content-Encoding: gzip`, unless the result
///   would not be smaller. A ``/NetworkAgent/FileBackedBodyStream`` body is compressed chunk by chunk into a new
///   temporary file, in constant memory. Any `Content-Length` header is removed: the transport sets the right one.
/// - **Responses** (`intercept`, so every plugin outside it and every `onResponse` sees the result): a response
///   with `Content-Encoding: gzip`, `x-gzip` or `deflate` and a non-empty body ends up with the decoded body, no
///   `Content-Encoding` and a `Content-Length` that matches the body. ``/NetworkAgent/URLSessionTransport`` has always
///   decoded the body already (libcurl decodes every response and keeps the header), so there only the headers are
///   fixed. Other transports' bodies are inflated when they really are compressed, within ``limits``.
///
/// A body that looks compressed but does not decode fails the call with ``/NetworkAgent/NetworkAgentError`` code
/// ``/NetworkAgent/NetworkAgentError/Code/invalidResponse``; its `underlying` error is the ``GzipPlugin/Error`` (a limit of
/// ``limits`` exceeded, corrupt data, a bad checksum, a truncated stream), `response` the response as received and
/// `data` the body as received.
///
/// The plugin emits ``/NetworkAgent/NetworkAgentEvent``s with source `gzip`: `request_compressed` (`bytes_before`,
/// `bytes_after`, `body`: `data` or `file`), `request_not_compressed` (`reason`: `not_smaller`),
/// `response_inflated` (`encoding`, `format`, `bytes_before`, `bytes_after`), `response_headers_normalized`
/// (`encoding`; the body was already decoded) and `response_inflate_failed` (`reason`: the ``GzipPlugin/Error/code``).
public struct GzipPlugin: NetworkAgentPlugin {
    /// The default ``minimumBodySize``: 1 KiB.
    ///
    /// Below about a kilobyte the gzip header and trailer (18 bytes) and the CPU time outweigh the saving, and the
    /// request usually fits in one packet anyway.
    public static let defaultMinimumBodySize = 1024

    /// The default ``level``: 6, the default of gzip and zlib, which gets close to level 9's size at a fraction of
    /// its time.
    public static let defaultLevel = 6

    /// The `Accept-Encoding` value added to buffered requests sent through a transport other than
    /// ``/NetworkAgent/URLSessionTransport`` when they have none: `gzip, deflate` (RFC 9110, section 12.5.3).
    ///
    /// URLSession is left alone: libcurl already advertises `deflate, gzip, br, zstd` on Linux and decodes them all.
    public static let acceptEncoding = "gzip, deflate"

    /// Whether request bodies are compressed; when `false` the plugin only decodes responses.
    public let compressesRequests: Bool

    /// The gzip compression level of request bodies, from 1 (fastest) to 9 (smallest); 0 stores without
    /// compressing, which never makes a body smaller and so disables request compression.
    public let level: Int

    /// The smallest request body, in bytes, that is compressed.
    public let minimumBodySize: Int

    /// The bounds on inflated response bodies (the decompression-bomb guard).
    public let limits: Inflater.Limits

    /// Where compressed copies of file-backed request bodies are written; each is deleted when the last request
    /// holding it goes away.
    public let temporaryDirectory: URL

    let isCompressibleContentType: @Sendable (String) -> Bool

    /// Creates a gzip plugin.
    ///
    /// - Parameters:
    ///   - compressesRequests: Compress request bodies; `true` by default. Not every server accepts a compressed
    ///     request body (many answer 415): enable it for the APIs that do.
    ///   - level: The compression level, clamped to `0...9`; ``defaultLevel`` by default.
    ///   - minimumBodySize: The smallest body compressed, in bytes; ``defaultMinimumBodySize`` by default.
    ///   - isCompressible: Tells from a request's `Content-Type` whether its body is worth compressing;
    ///     ``isCompressible(contentType:)`` by default.
    ///   - limits: The bounds on inflated response bodies; ``Inflater/Limits/default`` (256 MiB, 1000:1) by
    ///     default.
    ///   - temporaryDirectory: Where compressed copies of file-backed bodies go; the system's temporary directory
    ///     by default.
    public init(
        compressesRequests: Bool = true,
        level: Int = GzipPlugin.defaultLevel,
        minimumBodySize: Int = GzipPlugin.defaultMinimumBodySize,
        isCompressible: @escaping @Sendable (_ contentType: String) -> Bool = {
            GzipPlugin.isCompressible(contentType: $0)
        },
        limits: Inflater.Limits = .default,
        temporaryDirectory: URL = FileManager.default.temporaryDirectory
    ) {
        self.compressesRequests = compressesRequests
        self.level = min(max(level, 0), 9)
        self.minimumBodySize = max(minimumBodySize, 0)
        self.isCompressibleContentType = isCompressible
        self.limits = limits
        self.temporaryDirectory = temporaryDirectory
    }

    /// Tells whether a body of this media type is text-like and worth compressing.
    ///
    /// `true` for `text/*`, `application/json`, `application/xml`, `application/javascript`,
    /// `application/x-www-form-urlencoded`, `application/x-ndjson` and any `+json` or `+xml` type (RFC 6839); `false`
    /// for everything else, notably images, archives and `multipart/*`, whose parts are usually compressed
    /// already. Parameters such as `charset` are ignored; the comparison is case-insensitive.
    /// - Parameter contentType: A `Content-Type` value, such as `application/json; charset=utf-8`.
    /// - Returns: Whether the body should be compressed.
    public static func isCompressible(contentType: String) -> Bool {
        let mediaType = contentType.split(separator: ";", maxSplits: 1).first.map(String.init) ?? ""
        let type = mediaType.trimmingCharacters(in: .whitespaces).lowercased()
        if type.hasPrefix("text/") || type.hasSuffix("+json") || type.hasSuffix("+xml") {
            return true
        }
        return compressibleMediaTypes.contains(type)
    }

    private static let compressibleMediaTypes: Set<String> = [
        "application/json", "application/xml", "application/javascript", "application/x-www-form-urlencoded",
        "application/x-ndjson",
    ]

    /// Compresses the request body when it is large enough, compressible and not encoded yet.
    ///
    /// - Parameters:
    ///   - request: The request so far.
    ///   - endpoint: The endpoint of the call.
    /// - Returns: The request with a gzip body and `Content-Encoding: gzip`, or `request` unchanged.
    /// - Throws: ``/NetworkAgent/NetworkAgentError`` with ``/NetworkAgent/NetworkAgentError/Code/encoding`` when a
    ///   file-backed body cannot be read or its compressed copy cannot be written, or
    ///   ``/NetworkAgent/NetworkAgentError/Code/cancelled`` when the task is cancelled while compressing one.
    public func onRequest(
        _ request: consuming URLRequest,
        endpoint: any NetworkAgentEndpoint
    ) async throws -> URLRequest {
        try compressBody(of: &request)
        return request
    }

    /// Adds `Accept-Encoding` for transports other than URLSession (to buffered calls only: a streamed body reaches
    /// the caller without passing through the plugin), then decodes the response.
    ///
    /// - Parameters:
    ///   - request: The request to send.
    ///   - endpoint: The endpoint of the call.
    ///   - next: The rest of the exchange.
    /// - Returns: The response with a decoded body and consistent `Content-Encoding` and `Content-Length` headers.
    /// - Throws: What `next` throws, or ``/NetworkAgent/NetworkAgentError`` with
    ///   ``/NetworkAgent/NetworkAgentError/Code/invalidResponse`` and a ``GzipPlugin/Error`` as `underlying` when a compressed
    ///   body does not decode within ``limits``.
    public func intercept(
        _ request: URLRequest,
        endpoint: any NetworkAgentEndpoint,
        next: NetworkAgentExchange
    ) async throws -> (data: Data, response: URLResponse) {
        // `URLSessionTransport` is final: its instances are exactly those whose dynamic type it is, which one
        // comparison of metatypes tells without the dynamic cast `is` makes from the existential.
        let transportDecodes = type(of: next.agent.transport) == URLSessionTransport.self
        var request = request
        // A streamed body goes to the caller without passing through here, so it is never asked for compressed.
        if !transportDecodes && !next.isStreaming {
            request.addHeaderFieldIfAbsent(Self.acceptEncoding, for: "Accept-Encoding")
        }
        let (data, response) = try await next(request)
        return try decode(data, response: response, transportDecodes: transportDecodes)
    }
}

extension NetworkAgentPlugin where Self == GzipPlugin {
    /// A plugin that gzips request bodies and decodes gzip and deflate responses; see ``GzipPlugin``.
    ///
    /// ```swift
    /// let provider = NetworkAgentProvider<Api>(plugins: [.gzip(level: 6)])
    /// ```
    /// - Parameters:
    ///   - compressesRequests: Compress request bodies; `true` by default.
    ///   - level: The compression level, clamped to `0...9`; ``GzipPlugin/defaultLevel`` by default.
    ///   - minimumBodySize: The smallest body compressed, in bytes; ``GzipPlugin/defaultMinimumBodySize`` by default.
    ///   - isCompressible: Tells from a `Content-Type` whether a body is worth compressing;
    ///     ``GzipPlugin/isCompressible(contentType:)`` by default.
    ///   - limits: The bounds on inflated response bodies; ``Inflater/Limits/default`` by default.
    ///   - temporaryDirectory: Where compressed copies of file-backed bodies go; the system's temporary directory
    ///     by default.
    /// - Returns: A ``GzipPlugin``.
    public static func gzip(
        compressesRequests: Bool = true,
        level: Int = GzipPlugin.defaultLevel,
        minimumBodySize: Int = GzipPlugin.defaultMinimumBodySize,
        isCompressible: @escaping @Sendable (_ contentType: String) -> Bool = {
            GzipPlugin.isCompressible(contentType: $0)
        },
        limits: Inflater.Limits = .default,
        temporaryDirectory: URL = FileManager.default.temporaryDirectory
    ) -> GzipPlugin {
        GzipPlugin(
            compressesRequests: compressesRequests,
            level: level,
            minimumBodySize: minimumBodySize,
            isCompressible: isCompressible,
            limits: limits,
            temporaryDirectory: temporaryDirectory
        )
    }
}
