import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A response body delivered in chunks as they arrive, from ``NetworkAgentProvider/stream(endpoint:progress:)``.
///
/// Iterate it once, or read it as lines, NDJSON values or server-sent events (see ``HTTPBodySequence``). Leaving
/// the `for try await` loop, or cancelling the iterating task, cancels the network task at once; so does dropping
/// the body (every copy of it, and of the ``HTTPStreamResponse`` holding it) without iterating it. A slow consumer
/// does not make memory grow without bound: a transport that can pause its transfer (one that builds its bodies
/// with ``HTTPBodySequence/makeStream(bufferLimit:onDemand:onTermination:)``, like the curl transport) pauses it while its buffer
/// limit waits unread; FoundationNetworking cannot pause a download, so with ``URLSessionTransport`` when more than
/// its `streamBufferLimit` (64 MiB by default) bytes wait unread the stream ends with
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

    /// Makes a body that a transport writes into as bytes arrive, with backpressure: what a transport's
    /// ``HTTPTransport/stream(_:)`` returns in its ``HTTPStreamResponse``.
    ///
    /// The transport writes each chunk with ``HTTPBodyWriter/write(_:)``. Once `bufferLimit` bytes wait unread,
    /// `write` returns `false`: the transport pauses its transfer and resumes it when `onDemand` runs, so memory
    /// stays bounded by about `bufferLimit` whatever the body's size.
    ///
    /// ```swift
    /// let (body, writer) = HTTPByteStream.makeStream(
    ///     bufferLimit: 1 << 20,
    ///     onDemand: { print("resume the transfer") },
    ///     onTermination: { print("abort the transfer") }
    /// )
    /// if !writer.write(Data("chunk".utf8)) { print("pause the transfer") }
    /// writer.finish()
    /// _ = body
    /// ```
    ///
    /// - Parameters:
    ///   - bufferLimit: The bytes the body may hold unread before `write` returns `false`.
    ///   - onDemand: Called, on the consumer's thread and outside any lock, each time the consumer has read every
    ///     waiting byte after a `write` returned `false`: resume the transfer. Keep it short.
    ///   - onTermination: Called once when the body ends before the writer finished it: the consumer cancelled its
    ///     task or stopped iterating, dropped the body unread, or a deadline failed it. Abort the transfer and free
    ///     its connection.
    /// - Returns: The body to hand the caller and the writer the transport keeps.
    public static func makeStream(
        bufferLimit: Int = URLSessionTransport.defaultStreamBufferLimit,
        onDemand: @escaping @Sendable () -> Void,
        onTermination: @escaping @Sendable () -> Void
    ) -> (stream: HTTPByteStream, writer: HTTPBodyWriter) {
        let buffer = ChunkBuffer(limit: Swift.max(1, bufferLimit), onDemand: onDemand, cancelProducer: onTermination)
        return (HTTPByteStream(buffer: buffer), HTTPBodyWriter(buffer: buffer))
    }
}

/// The transport's end of a body made with ``HTTPBodySequence/makeStream(bufferLimit:onDemand:onTermination:)``.
public struct HTTPBodyWriter: Sendable {
    let buffer: ChunkBuffer

    /// Hands a chunk to the consumer: it is kept unless the body already ended.
    ///
    /// - Parameter chunk: The next bytes of the body.
    /// - Returns: `false` when the transport should pause until `onDemand` (the body holds its buffer limit unread),
    ///   or stop (the body ended: the consumer is gone); `true` to go on.
    @discardableResult
    public func write(_ chunk: Data) -> Bool {
        buffer.append(chunk)
    }

    /// Ends the body: the consumer reads what waits, then the end.
    public func finish() {
        buffer.finish(throwing: nil)
    }

    /// Ends the body with a failure, which the consumer gets after what waits.
    ///
    /// - Parameter error: The failure: a ``NetworkAgentError`` as it is, anything else mapped as
    ///   ``HTTPTransportContext/error(for:request:)`` does.
    public func finish(throwing error: any Error) {
        buffer.finish(throwing: ChunkBuffer.publicError(error))
    }

    /// Whether the body ended: finished by the writer, or given up by the consumer.
    public var isTerminated: Bool {
        buffer.isFinished
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
