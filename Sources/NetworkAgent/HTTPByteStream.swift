import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A response body delivered in chunks as they arrive, from ``NetworkAgentProvider/stream(endpoint:progress:)``.
///
/// Iterate it once. Leaving the `for try await` loop, or cancelling the iterating task, cancels the network task
/// at once; so does dropping the body (every copy of it, and of the ``HTTPStreamResponse`` holding it) without
/// iterating it. A slow consumer does not make memory grow without bound: FoundationNetworking cannot pause a
/// download, so when more than ``URLSessionTransport/streamBufferLimit`` bytes wait unread the stream ends with
/// ``NetworkAgentError/Code/streamOverflow`` and the download is cancelled.
public struct HTTPByteStream: AsyncSequence, Sendable {
    /// A chunk of the body.
    public typealias Element = Data

    private let lifetime: Lifetime

    /// The queue the chunks arrive in.
    var buffer: ChunkBuffer { lifetime.buffer }

    init(buffer: ChunkBuffer) {
        self.lifetime = Lifetime(buffer: buffer)
    }

    /// A stream that yields `data` as one chunk and ends, for transports that cannot stream.
    init(data: Data) {
        let buffer = ChunkBuffer(limit: .max, cancelProducer: {})
        buffer.append(data)
        buffer.finish(throwing: nil)
        self.init(buffer: buffer)
    }

    /// Makes the iterator.
    ///
    /// - Returns: An iterator over the body's chunks.
    public func makeAsyncIterator() -> Iterator {
        Iterator(reader: Reader(lifetime: lifetime))
    }

    /// Reads the chunks; when the last copy goes away before the end, the network task is cancelled.
    public struct Iterator: AsyncIteratorProtocol {
        fileprivate let reader: Reader

        /// Waits for the next chunk.
        ///
        /// - Returns: The next chunk, or `nil` at the end of the body.
        /// - Throws: ``NetworkAgentError`` when the connection fails, times out or is cancelled.
        public mutating func next() async throws -> Data? {
            try await reader.next()
        }
    }

    /// Cancels the transfer when the last copy of the body and of its iterators is gone: a body nobody reads must
    /// not keep its connection open until the server ends it.
    fileprivate final class Lifetime: Sendable {
        let buffer: ChunkBuffer
        init(buffer: ChunkBuffer) { self.buffer = buffer }
        deinit { buffer.cancel() }
    }

    fileprivate final class Reader: Sendable {
        // Holds the body's lifetime, so that iterating a body whose stream value is gone goes on.
        private let lifetime: Lifetime
        init(lifetime: Lifetime) { self.lifetime = lifetime }
        deinit { lifetime.buffer.cancel() }

        func next() async throws -> Data? {
            do {
                return try await lifetime.buffer.next()
            } catch {
                throw ChunkBuffer.publicError(error)
            }
        }
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
    public var statusCode: Int { response.statusCode }
}
