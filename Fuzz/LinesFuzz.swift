// libFuzzer entry point for the core's streamed-line parsing: LineSplitter, ServerSentEventParser and the public
// `lines()`, `serverSentEvents()` and `ndjson(as:)` sequences of HTTPByteStream built on them.
//
// Not part of the package: Scripts/fuzz compiles this file against the core, built with the same sanitizer flags
// and -enable-testing (the splitter and the parser are internal). An input is read as:
//
//     byte 0             how many chunk sizes follow (0–7; none means the body is one chunk)
//     bytes 1...n        the chunk sizes, used in turn until the body is used up (0 is an empty chunk)
//     next byte          the splitter's line limit for the limit run (0 means 1 MiB, else 1–255 bytes)
//     the rest           the body
//
// Properties, with the body fed in one piece and in the chosen uneven pieces:
//
// 1. the splitter gives the same lines either way, and exactly the lines of a plain reference split at LF, CRLF
//    and lone CR (a last line without a break only if non-empty), decoded as UTF-8;
// 2. no returned line is longer than the limit: when the reference has a longer line, the splitter throws
//    NetworkAgentError `.invalidResponse` instead, whatever the chunking;
// 3. the parser and the public `serverSentEvents()` give the same events either way; an event's type and id have
//    no line break, its id no NUL, and there are never more events than blank lines;
// 4. `ndjson(as:)` decodes every non-blank line or throws NetworkAgentError `.decoding` naming the first line that
//    does not decode — the same values, or the same error, either way and as decoding the lines one by one.
//
// A failed property stops the run with fatalError, which libFuzzer reports as a crash with the input saved.
import Foundation

@testable import NetworkAgent

/// Runs one input; libFuzzer calls it by its C name. Always returns 0 (the input is usable).
@_cdecl("LLVMFuzzerTestOneInput")
public func linesFuzzTestOneInput(_ bytes: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let data = bytes.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    check(LinesCase(data))
    return 0
}

struct LinesCase {
    var body: [UInt8]
    var chunkSizes: [Int]
    var limit: Int

    init(_ bytes: [UInt8]) {
        var input = FuzzInput(bytes)
        chunkSizes = (0..<input.int(below: 8)).map { _ in Int(input.byte()) }
        let limitByte = input.byte()
        limit = limitByte == 0 ? 1 << 20 : Int(limitByte)
        body = input.rest()
    }

    /// The body cut at the chosen sizes, empty chunks included.
    var chunks: [Data] {
        guard !chunkSizes.isEmpty, chunkSizes.contains(where: { $0 > 0 }) else { return [Data(body)] }
        var chunks: [Data] = []
        var offset = 0
        var turn = 0
        while offset < body.count {
            let end = min(offset + chunkSizes[turn % chunkSizes.count], body.count)
            chunks.append(Data(body[offset..<end]))
            offset = end
            turn += 1
        }
        return chunks
    }
}

func check(_ linesCase: LinesCase) {
    let whole = [Data(linesCase.body)]
    let pieces = linesCase.chunks
    let reference = ReferenceLines(linesCase.body)

    // 1 and 2: the splitter, with the chosen limit and with the default one.
    for limit in Set([linesCase.limit, 1 << 20]) {
        let oneShot = split(whole, limit: limit)
        let chunked = split(pieces, limit: limit)
        guard oneShot == chunked else {
            fail(linesCase, "limit \(limit): one chunk gave \(oneShot), \(pieces.count) chunks gave \(chunked)")
        }
        if reference.longest > limit {
            guard oneShot == .tooLong else {
                fail(linesCase, "limit \(limit): a \(reference.longest)-byte line gave \(oneShot)")
            }
        } else {
            guard oneShot == .lines(reference.decoded) else {
                fail(linesCase, "limit \(limit): lines \(oneShot), the reference split gives \(reference.decoded)")
            }
        }
        if case .lines(let lines) = oneShot, let long = lines.first(where: { $0.unicodeScalars.count > limit }) {
            fail(linesCase, "limit \(limit): a line of \(long.unicodeScalars.count) scalars was returned")
        }
    }

    // 3: server-sent events, parsed from the reference lines and through the public sequence.
    var parser = ServerSentEventParser()
    let parsed = reference.decoded.compactMap { parser.process($0) }
    // A byte order mark alone on the first line leaves it blank.
    let blankLines = reference.decoded.enumerated().filter { $1.isEmpty || ($0 == 0 && $1 == "\u{FEFF}") }.count
    guard parsed.count <= blankLines else { fail(linesCase, "\(parsed.count) events from \(blankLines) blank lines") }
    for event in parsed {
        let breaks: (Unicode.Scalar) -> Bool = { $0 == "\r" || $0 == "\n" }
        let id = event.id?.unicodeScalars ?? "".unicodeScalars
        if event.event.unicodeScalars.contains(where: breaks) || id.contains(where: breaks) || id.contains("\0")
            || event.data.unicodeScalars.contains("\r")
        {
            fail(linesCase, "event \(event) has a line break or NUL where none can be")
        }
        if let retry = event.retry, retry < .zero { fail(linesCase, "event \(event) has a negative retry") }
    }
    for chunks in [whole, pieces] {
        let streamed = runBlocking { await streamEvents(chunks) }
        guard streamed == .events(parsed) else {
            fail(linesCase, "\(chunks.count) chunks streamed \(streamed), the parser gave \(parsed)")
        }
    }

    // 4: NDJSON.
    let expected = decodeLines(reference.decoded)
    for chunks in [whole, pieces] {
        let streamed = runBlocking { await streamNDJSON(chunks) }
        guard streamed == expected else {
            fail(linesCase, "\(chunks.count) chunks decoded \(streamed), line by line gives \(expected)")
        }
    }
}

// MARK: - Lines

enum SplitOutcome: Equatable {
    case lines([String])
    case tooLong
}

func split(_ chunks: [Data], limit: Int) -> SplitOutcome {
    var splitter = LineSplitter(maximumLineLength: limit)
    var lines: [String] = []
    do {
        for chunk in chunks { lines += try splitter.feed(chunk) }
    } catch {
        guard error.code == .invalidResponse else { fatalError("the splitter threw \(error)") }
        return .tooLong
    }
    if let last = splitter.finish() { lines.append(last) }
    return .lines(lines)
}

/// Lines split the plain way, from the whole body at once.
struct ReferenceLines {
    /// The lines' bytes.
    var raw: [[UInt8]] = []
    /// The length of the longest line, the unterminated last one included.
    var longest = 0

    init(_ body: [UInt8]) {
        var line: [UInt8] = []
        var index = 0
        while index < body.count {
            let byte = body[index]
            index += 1
            if byte == 10 || byte == 13 {
                raw.append(line)
                line = []
                if byte == 13, index < body.count, body[index] == 10 { index += 1 }
            } else {
                line.append(byte)
                longest = max(longest, line.count)
            }
        }
        if !line.isEmpty { raw.append(line) }
    }

    var decoded: [String] { raw.map { String(decoding: $0, as: UTF8.self) } }
}

// MARK: - Streams

/// A body stream delivering the chunks one by one, then ending.
func byteStream(_ chunks: [Data]) -> HTTPByteStream {
    let buffer = ChunkBuffer(limit: .max, cancelProducer: {})
    for chunk in chunks { buffer.append(chunk) }
    buffer.finish(throwing: nil)
    return HTTPByteStream(buffer: buffer)
}

enum EventsOutcome: Equatable, Sendable {
    case events([ServerSentEvent])
    case failure(String)
}

func streamEvents(_ chunks: [Data]) async -> EventsOutcome {
    var events: [ServerSentEvent] = []
    do {
        for try await event in byteStream(chunks).serverSentEvents() { events.append(event) }
    } catch {
        return .failure("\(error)")
    }
    return .events(events)
}

/// Any JSON value.
indirect enum JSONValue: Decodable, Equatable, Sendable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let flag = try? container.decode(Bool.self) {
            self = .bool(flag)
        } else if let number = try? container.decode(Double.self) {
            self = .number(number)
        } else if let text = try? container.decode(String.self) {
            self = .string(text)
        } else if let items = try? container.decode([JSONValue].self) {
            self = .array(items)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }
}

enum NDJSONOutcome: Equatable, Sendable {
    case values([JSONValue])
    /// The message of the `.decoding` error, which names the line.
    case decodingFailure(String)
}

func streamNDJSON(_ chunks: [Data]) async -> NDJSONOutcome {
    var values: [JSONValue] = []
    do {
        for try await value in byteStream(chunks).ndjson(as: JSONValue.self) { values.append(value) }
    } catch let error as NetworkAgentError {
        guard error.code == .decoding else { fatalError("ndjson threw \(error), not a decoding error") }
        return .decodingFailure(error.message)
    } catch {
        fatalError("ndjson threw \(type(of: error)), not NetworkAgentError: \(error)")
    }
    return .values(values)
}

/// What `ndjson(as:)` must give: each non-blank line decoded on its own, up to the first that fails.
func decodeLines(_ lines: [String]) -> NDJSONOutcome {
    var values: [JSONValue] = []
    for (index, line) in lines.enumerated() where !line.allSatisfy(\.isWhitespace) {
        guard let value = try? JSONDecoder().decode(JSONValue.self, from: Data(line.utf8)) else {
            return .decodingFailure("NDJSON line \(index + 1) is not a JSONValue")
        }
        values.append(value)
    }
    return .values(values)
}

/// Runs async work from libFuzzer's synchronous callback and waits for it.
func runBlocking<T: Sendable>(_ operation: @escaping @Sendable () async -> T) -> T {
    let result = Locked<T?>(nil)
    let done = DispatchSemaphore(value: 0)
    Task {
        let value = await operation()
        result.withLock { $0 = value }
        done.signal()
    }
    done.wait()
    guard let value = result.withLock({ $0 }) else { fatalError("the task ended without a result") }
    return value
}

func fail(_ linesCase: LinesCase, _ message: String) -> Never {
    fatalError(
        """
        \(message)
          chunk sizes: \(linesCase.chunkSizes), limit: \(linesCase.limit)
          body: \(String(decoding: linesCase.body, as: UTF8.self).debugDescription)
        """
    )
}
