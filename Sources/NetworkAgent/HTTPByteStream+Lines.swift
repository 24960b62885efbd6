import Foundation

extension HTTPBodySequence where Element == Data {
    /// The body as UTF-8 lines, split at LF, CRLF or CR, without the line breaks.
    ///
    /// A line longer than 1 MiB ends the sequence with ``NetworkAgentError/Code/invalidResponse``.
    ///
    /// - Returns: The lines, as their bytes arrive.
    public func lines() -> HTTPBodySequence<String> {
        HTTPBodySequence<String>(lifetime: lifetime, decoder: LinesDecoder(PlainLineDecoder()))
    }

    /// The body as newline-delimited JSON: one `T` per non-blank line.
    ///
    /// A line that does not decode ends the sequence with ``NetworkAgentError/Code/decoding``, naming the line.
    ///
    /// - Parameters:
    ///   - type: The type of each line.
    ///   - decoder: The decoder; a plain `JSONDecoder` by default.
    /// - Returns: The decoded values, as they arrive.
    public func ndjson<T: Decodable>(as type: T.Type, decoder: JSONDecoder = JSONDecoder()) -> HTTPBodySequence<T> {
        HTTPBodySequence<T>(lifetime: lifetime, decoder: LinesDecoder(NDJSONLineDecoder<T>(decoder: decoder)))
    }
}
