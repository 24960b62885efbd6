import Foundation

extension HTTPByteStream {
    /// The body as UTF-8 lines, split at LF, CRLF or CR, without the line breaks.
    ///
    /// A line longer than 1 MiB ends the sequence with ``NetworkAgentError/Code/invalidResponse``.
    ///
    /// - Returns: The lines, as their bytes arrive.
    public func lines() -> HTTPLineSequence {
        HTTPLineSequence(bytes: self)
    }

    /// The body as newline-delimited JSON: one `T` per non-blank line.
    ///
    /// A line that does not decode ends the sequence with ``NetworkAgentError/Code/decoding``, naming the line.
    ///
    /// - Parameters:
    ///   - type: The type of each line.
    ///   - decoder: The decoder; a plain `JSONDecoder` by default.
    /// - Returns: The decoded values, as they arrive.
    public func ndjson<T: Decodable>(as type: T.Type, decoder: JSONDecoder = JSONDecoder()) -> HTTPNDJSONSequence<T> {
        HTTPNDJSONSequence(lines: lines(), decoder: decoder)
    }
}

/// The values of a newline-delimited JSON body, from ``HTTPByteStream/ndjson(as:decoder:)``.
public struct HTTPNDJSONSequence<T: Decodable>: AsyncSequence {
    /// A decoded line.
    public typealias Element = T

    let lines: HTTPLineSequence
    let decoder: JSONDecoder

    /// Makes the iterator.
    ///
    /// - Returns: An iterator that decodes the lines as they arrive.
    public func makeAsyncIterator() -> Iterator {
        Iterator(lines: lines.makeAsyncIterator(), decoder: decoder)
    }

    /// Decodes lines as they arrive.
    public struct Iterator: AsyncIteratorProtocol {
        var lines: HTTPLineSequence.Iterator
        let decoder: JSONDecoder
        var lineNumber = 0

        /// Decodes the next non-blank line.
        ///
        /// - Returns: The next value, or `nil` at the end of the body.
        /// - Throws: ``NetworkAgentError`` with ``NetworkAgentError/Code/decoding`` for a line that is not a `T`,
        ///   or when the connection fails.
        public mutating func next() async throws -> T? {
            while let line = try await lines.next() {
                lineNumber += 1
                guard !line.allSatisfy(\.isWhitespace) else { continue }
                do {
                    return try decoder.decode(T.self, from: Data(line.utf8))
                } catch {
                    throw NetworkAgentError(
                        .decoding,
                        "NDJSON line \(lineNumber) is not a \(T.self)",
                        underlying: error
                    )
                }
            }
            return nil
        }
    }
}

/// The lines of an ``HTTPByteStream``.
public struct HTTPLineSequence: AsyncSequence, Sendable {
    /// A line without its line break.
    public typealias Element = String

    let bytes: HTTPByteStream

    /// Makes the iterator.
    ///
    /// - Returns: An iterator that splits the chunks into lines as they arrive.
    public func makeAsyncIterator() -> Iterator {
        Iterator(chunks: bytes.makeAsyncIterator())
    }

    /// Reads lines as their bytes arrive.
    public struct Iterator: AsyncIteratorProtocol {
        var chunks: HTTPByteStream.Iterator
        var splitter = LineSplitter()
        var ready: [String] = []
        var finished = false

        /// Reads up to the next line break.
        ///
        /// - Returns: The next line, or `nil` at the end of the body.
        /// - Throws: ``NetworkAgentError`` when the connection fails or a line is too long.
        public mutating func next() async throws -> String? {
            while ready.isEmpty {
                guard !finished else { return nil }
                if let chunk = try await chunks.next() {
                    ready = try splitter.feed(chunk)
                } else {
                    finished = true
                    if let last = splitter.finish() { ready = [last] }
                }
            }
            return ready.removeFirst()
        }
    }
}
