import Foundation

/// A request the server refuses, with the status to answer before closing the connection.
struct RequestRejection: Error {
    let status: Int
    let reason: String
}

/// The parsed request line and header fields of one request.
struct RequestHead {
    var method: String
    var target: String
    /// The minor version of `HTTP/1.x`.
    var minorVersion: Int
    var headers: [(name: String, value: String)]

    /// The comma-separated tokens of every field with this name, lowercased and trimmed.
    func tokens(of name: String) -> [String] {
        headers
            .filter { $0.name.caseInsensitiveCompare(name) == .orderedSame }
            .flatMap { $0.value.split(separator: ",") }
            .map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
            .filter { !$0.isEmpty }
    }

    /// Whether the client asked for the connection to close after this exchange.
    var wantsClose: Bool {
        let connection = tokens(of: "Connection")
        if connection.contains("close") { return true }
        return minorVersion == 0 && !connection.contains("keep-alive")
    }

    /// Whether the client sent `Expect: 100-continue` (only meaningful for HTTP/1.1).
    var expectsContinue: Bool {
        minorVersion >= 1 && tokens(of: "Expect").contains("100-continue")
    }
}

/// How the request body is delimited.
enum BodyFraming: Equatable {
    case none
    case length(Int)
    case chunked

    var hasBody: Bool {
        switch self {
        case .none: false
        case .length(let count): count > 0
        case .chunked: true
        }
    }
}

/// Parses HTTP/1.x requests: the head from bytes, the body from a ``SocketReader``.
enum HTTPRequestParser {
    /// The largest request head (request line plus header fields) accepted; larger ones get 431.
    static let maximumHeadBytes = 64 * 1024
    /// The largest chunk-size line accepted.
    static let maximumChunkLineBytes = 4 * 1024

    private static let tokenCharacters: Set<UInt8> = Set(Array("!#$%&'*+-.^_`|~".utf8))

    private static func isTokenByte(_ byte: UInt8) -> Bool {
        (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
            || tokenCharacters.contains(byte)
    }

    /// Parses a request head as returned by ``SocketReader/readHead(limit:)``.
    static func parseHead(_ bytes: [UInt8]) throws(RequestRejection) -> RequestHead {
        var lines = bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).map { line in
            line.last == UInt8(ascii: "\r") ? line.dropLast() : line
        }
        while let last = lines.last, last.isEmpty { lines.removeLast() }
        guard let requestLine = lines.first else { throw RequestRejection(status: 400, reason: "empty request") }
        var head = try parseRequestLine(requestLine)
        for line in lines.dropFirst() {
            head.headers.append(try parseHeaderLine(line))
        }
        return head
    }

    private static func parseRequestLine(_ line: ArraySlice<UInt8>) throws(RequestRejection) -> RequestHead {
        let parts = line.split(separator: UInt8(ascii: " "), omittingEmptySubsequences: false)
        guard parts.count == 3, let methodBytes = parts.first, !methodBytes.isEmpty,
            methodBytes.allSatisfy(isTokenByte)
        else {
            throw RequestRejection(status: 400, reason: "malformed request line")
        }
        let targetBytes = parts[1]
        guard !targetBytes.isEmpty, targetBytes.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
            throw RequestRejection(status: 400, reason: "malformed request target")
        }
        let version = Array(parts[2])
        let prefix = Array("HTTP/".utf8)
        guard version.count == 8, Array(version[0..<5]) == prefix, version[6] == UInt8(ascii: "."),
            isDigit(version[5]), isDigit(version[7])
        else {
            throw RequestRejection(status: 400, reason: "malformed HTTP version")
        }
        guard version[5] == UInt8(ascii: "1") else {
            throw RequestRejection(status: 505, reason: "only HTTP/1.x is supported")
        }
        return RequestHead(
            method: String(decoding: methodBytes, as: UTF8.self),
            target: String(decoding: targetBytes, as: UTF8.self),
            minorVersion: Int(version[7] - UInt8(ascii: "0")),
            headers: []
        )
    }

    private static func parseHeaderLine(
        _ line: ArraySlice<UInt8>
    ) throws(RequestRejection) -> (name: String, value: String) {
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else {
            throw RequestRejection(status: 400, reason: "header field without a colon")
        }
        let name = line[line.startIndex..<colon]
        guard !name.isEmpty, name.allSatisfy(isTokenByte) else {
            // This also rejects obsolete line folding (a line starting with whitespace).
            throw RequestRejection(status: 400, reason: "malformed header field name")
        }
        var value = line[line.index(after: colon)...]
        while let first = value.first, isWhitespace(first) { value = value.dropFirst() }
        while let last = value.last, isWhitespace(last) { value = value.dropLast() }
        guard !value.contains(where: { ($0 < 0x20 && $0 != 0x09) || $0 == 0x7F }) else {
            throw RequestRejection(status: 400, reason: "control character in header field value")
        }
        return (String(decoding: name, as: UTF8.self), String(decoding: value, as: UTF8.self))
    }

    /// Decides how the body is delimited, per RFC 9112 section 6.
    static func bodyFraming(of head: RequestHead) throws(RequestRejection) -> BodyFraming {
        let transferCodings = head.tokens(of: "Transfer-Encoding")
        if !transferCodings.isEmpty {
            guard transferCodings == ["chunked"] else {
                throw RequestRejection(status: 501, reason: "unsupported transfer coding")
            }
            return .chunked
        }
        let lengths = head.tokens(of: "Content-Length")
        guard let first = lengths.first else { return .none }
        guard lengths.allSatisfy({ $0 == first }), first.utf8.allSatisfy(isDigit), let length = Int(first) else {
            throw RequestRejection(status: 400, reason: "invalid Content-Length")
        }
        return .length(length)
    }

    /// Whether the request carried both `Transfer-Encoding` and `Content-Length`; such a connection must close.
    static func hasConflictingFraming(_ head: RequestHead) -> Bool {
        !head.tokens(of: "Transfer-Encoding").isEmpty && !head.tokens(of: "Content-Length").isEmpty
    }

    /// Reads the body that `framing` describes. Throws ``ReadFailure`` or ``RequestRejection``.
    static func readBody(_ framing: BodyFraming, from reader: inout SocketReader) throws -> Data {
        switch framing {
        case .none:
            return Data()
        case .length(let count):
            // Reserving avoids regrowing a large body; capped, since the length is the peer's claim.
            var body = Data(capacity: min(count, 256 * 1024 * 1024))
            try reader.read(count: count, appendingTo: &body)
            return body
        case .chunked:
            return try readChunkedBody(from: &reader)
        }
    }

    private static func readChunkedBody(from reader: inout SocketReader) throws -> Data {
        var body = Data()
        while true {
            let line = try readFramingLine(from: &reader)
            let size = try chunkSize(of: line)
            if size == 0 { break }
            try reader.read(count: size, appendingTo: &body)
            guard try readFramingLine(from: &reader).isEmpty else {
                throw RequestRejection(status: 400, reason: "chunk data not followed by CRLF")
            }
        }
        // Trailer fields are read and ignored, up to the same limit as a head.
        var trailerBytes = 0
        while true {
            let line = try readFramingLine(from: &reader)
            if line.isEmpty { return body }
            trailerBytes += line.count + 2
            guard trailerBytes <= maximumHeadBytes else {
                throw RequestRejection(status: 431, reason: "trailer section too large")
            }
        }
    }

    private static func readFramingLine(from reader: inout SocketReader) throws -> [UInt8] {
        do {
            return try reader.readLine(limit: maximumChunkLineBytes)
        } catch .limitExceeded {
            throw RequestRejection(status: 400, reason: "chunk framing line too long")
        }
    }

    /// Parses `chunk-size [ chunk-ext ]`.
    static func chunkSize(of line: [UInt8]) throws(RequestRejection) -> Int {
        let digits = line.prefix { isHexDigit($0) }
        let rest = line.dropFirst(digits.count).drop { isWhitespace($0) }
        guard !digits.isEmpty, digits.count <= 15, rest.isEmpty || rest.first == UInt8(ascii: ";"),
            let size = Int(String(decoding: digits, as: UTF8.self), radix: 16)
        else {
            throw RequestRejection(status: 400, reason: "malformed chunk size")
        }
        return size
    }

    private static func isDigit(_ byte: UInt8) -> Bool {
        byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
    }

    private static func isHexDigit(_ byte: UInt8) -> Bool {
        isDigit(byte) || (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "f"))
            || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "F"))
    }

    private static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t")
    }
}
