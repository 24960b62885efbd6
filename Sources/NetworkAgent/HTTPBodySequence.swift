import Foundation

/// A streamed response body, read as it arrives: as chunks of bytes (``HTTPByteStream``), or decoded into lines
/// (``lines()``), newline-delimited JSON values (``ndjson(as:decoder:)``) or server-sent events
/// (``serverSentEvents()``).
///
/// One type for every reading of a body: each is the body's chunks turned into elements by a decoder that keeps
/// its own state for one iteration. Iterate it once. Leaving the `for try await` loop, or cancelling the iterating
/// task, cancels the network task at once; so does dropping the body (every copy of it, and of the
/// ``HTTPStreamResponse`` holding it) without iterating it.
public struct HTTPBodySequence<Element>: AsyncSequence, Sendable {
    /// The body's chunks, and the transfer they come from.
    let lifetime: BodyLifetime
    /// Turns chunks into elements; each iteration starts from this value.
    let decoder: any BodyDecoder<Element>

    /// Makes the iterator.
    ///
    /// - Returns: An iterator that decodes the body as its chunks arrive.
    public func makeAsyncIterator() -> Iterator {
        Iterator(reader: BodyReader(lifetime: lifetime), decoder: decoder)
    }

    /// Decodes the body as its chunks arrive; when the last copy goes away before the end, the network task is
    /// cancelled.
    public struct Iterator: AsyncIteratorProtocol {
        let reader: BodyReader
        var decoder: any BodyDecoder<Element>
        var finished = false

        /// Reads chunks up to the next element.
        ///
        /// - Returns: The next element, or `nil` at the end of the body.
        /// - Throws: ``NetworkAgentError`` when the connection fails, times out or is cancelled, or when the body
        ///   does not decode (a line too long, a line that is not JSON of the expected type).
        public mutating func next() async throws -> Element? {
            while true {
                if let element = try decoder.next() { return element }
                guard !finished else { return nil }
                if let chunk = try await reader.next() {
                    try decoder.feed(chunk)
                } else {
                    finished = true
                    decoder.finish()
                }
            }
        }
    }
}

/// Cancels the transfer when the last copy of the body and of its iterators is gone: a body nobody reads must not
/// keep its connection open until the server ends it.
final class BodyLifetime: Sendable {
    let buffer: ChunkBuffer
    init(buffer: ChunkBuffer) { self.buffer = buffer }
    deinit { buffer.cancel() }
}

/// Reads the chunks of one iteration.
final class BodyReader: Sendable {
    // Holds the body's lifetime, so that iterating a body whose stream value is gone goes on.
    private let lifetime: BodyLifetime
    init(lifetime: BodyLifetime) { self.lifetime = lifetime }
    deinit { lifetime.buffer.cancel() }

    func next() async throws -> Data? {
        do {
            return try await lifetime.buffer.next()
        } catch {
            throw ChunkBuffer.publicError(error)
        }
    }
}

/// Turns the chunks of a body into elements, keeping its state (a partial line, a line count, a half-read event)
/// for one iteration.
protocol BodyDecoder<Element>: Sendable {
    associatedtype Element
    /// Takes the next chunk of the body.
    mutating func feed(_ chunk: Data) throws
    /// Takes the end of the body.
    mutating func finish()
    /// Decodes the next element of what was fed, or returns `nil` when it needs more of the body.
    mutating func next() throws -> Element?
}

/// The chunks themselves.
struct ChunkDecoder: BodyDecoder {
    private var pending: Data?

    mutating func feed(_ chunk: Data) { pending = chunk }
    func finish() {}
    mutating func next() -> Data? {
        defer { pending = nil }
        return pending
    }
}

/// Turns the lines of a body into elements.
protocol LineDecoder<Element>: Sendable {
    associatedtype Element
    /// The element `line` completes, or `nil` when it completes none.
    mutating func decode(_ line: String) throws -> Element?
}

/// Splits the chunks into lines (``LineSplitter``) and hands them, one at a time, to a ``LineDecoder``.
struct LinesDecoder<Lines: LineDecoder>: BodyDecoder {
    private var splitter = LineSplitter()
    private var lines: Lines
    private var pending: [String] = []
    private var nextPending = 0

    init(_ lines: Lines) {
        self.lines = lines
    }

    mutating func feed(_ chunk: Data) throws {
        pending = try splitter.feed(chunk)
        nextPending = 0
    }

    mutating func finish() {
        pending = splitter.finish().map { [$0] } ?? []
        nextPending = 0
    }

    mutating func next() throws -> Lines.Element? {
        while nextPending < pending.count {
            let line = pending[nextPending]
            nextPending += 1
            if let element = try lines.decode(line) { return element }
        }
        return nil
    }
}

/// The lines themselves.
struct PlainLineDecoder: LineDecoder {
    func decode(_ line: String) -> String? { line }
}

/// One JSON value per non-blank line.
struct NDJSONLineDecoder<Value: Decodable>: LineDecoder {
    let decoder: JSONDecoder
    private var lineNumber = 0

    init(decoder: JSONDecoder) {
        self.decoder = decoder
    }

    mutating func decode(_ line: String) throws -> Value? {
        lineNumber += 1
        guard !line.allSatisfy(\.isWhitespace) else { return nil }
        do {
            return try decoder.decode(Value.self, from: Data(line.utf8))
        } catch {
            throw NetworkAgentError(.decoding, "NDJSON line \(lineNumber) is not a \(Value.self)", underlying: error)
        }
    }
}
