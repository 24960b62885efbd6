import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A response body delivered in chunks as they arrive, from ``NetworkAgentProvider/stream(endpoint:progress:)``.
///
/// Iterate it once, or read it as lines, NDJSON values or server-sent events (see ``HTTPBodySequence``). Leaving
/// the `for try await` loop, or cancelling the iterating task, cancels the network task at once; so does dropping
/// the body (every copy of it, and of the ``HTTPStreamResponse`` holding it) without iterating it. A slow consumer
/// does not make memory grow without bound: FoundationNetworking cannot pause a download, so when more than the
/// transport's `streamBufferLimit` (64 MiB by default) bytes wait unread the stream ends with
/// ``NetworkAgentError/Code/streamOverflow`` and the download is cancelled.
public typealias HTTPByteStream = HTTPBodySequence<Data>

extension HTTPBodySequence where Element == Data {
    /// The queue the chunks arrive in.
    var buffer: ChunkBuffer { lifetime.buffer }

    init(buffer: ChunkBuffer) {
        self.init(lifetime: BodyLifetime(buffer: buffer), decoder: ChunkDecoder())
    }

    /// A body that yields `data` as one chunk and ends, for a transport that cannot stream.
    ///
    /// ``HTTPTransport``'s default ``HTTPTransport/stream(_:)`` uses it; a transport of your own that receives
    /// the whole body at once builds its ``HTTPStreamResponse`` with it.
    ///
    /// - Parameter data: The whole body.
    public init(data: Data) {
        let buffer = ChunkBuffer(limit: .max, cancelProducer: {})
        buffer.append(data)
        buffer.finish(throwing: nil)
        self.init(buffer: buffer)
    }
}

/// A streamed response: its status and headers, available before the body, and the body as it arrives.
public struct HTTPStreamResponse: Sendable {
    /// The response, with status code and headers.
    public let response: HTTPURLResponse
    /// The body chunks.
    public let body: HTTPByteStream

    /// Creates a streamed response.
    ///
    /// - Parameters:
    ///   - response: The response head.
    ///   - body: The body chunks.
    public init(response: HTTPURLResponse, body: HTTPByteStream) {
        self.response = response
        self.body = body
    }

    /// The status code.
    package var statusCode: Int { response.statusCode }
}
