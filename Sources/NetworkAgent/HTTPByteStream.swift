import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A response body delivered in chunks as they arrive, from ``NetworkAgentProvider/stream(endpoint:progress:)``.
///
/// Iterate it once. Leaving the `for try await` loop, or cancelling the iterating task, cancels the network task
/// at once. A slow consumer does not make memory grow without bound: FoundationNetworking cannot pause a download,
/// so when more than ``URLSessionTransport/streamBufferLimit`` bytes wait unread the stream ends with
/// ``NetworkAgentError/Code/streamOverflow`` and the download is cancelled.
public struct HTTPByteStream: AsyncSequence, Sendable {
    /// A chunk of the body.
    public typealias Element = Data

    private let buffer: ChunkBuffer

    init(buffer: ChunkBuffer) {
        self.buffer = buffer
    }

    /// A stream that yields `data` as one chunk and ends, for transports that cannot stream.
    init(data: Data) {
        let buffer = ChunkBuffer(limit: .max, cancelProducer: {})
        buffer.append(data)
        buffer.finish(throwing: nil)
        self.buffer = buffer
    }

    /// Makes the iterator.
    ///
    /// - Returns: An iterator over the body's chunks.
    public func makeAsyncIterator() -> Iterator {
        Iterator(reader: Reader(buffer: buffer))
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

    fileprivate final class Reader: Sendable {
        let buffer: ChunkBuffer
        init(buffer: ChunkBuffer) { self.buffer = buffer }
        deinit { buffer.cancel() }

        func next() async throws -> Data? {
            do {
                return try await buffer.next()
            } catch let failure as SessionDelegate.Failure {
                throw URLSessionTransport.map(failure, request: nil)
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
