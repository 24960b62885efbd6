// Turns libFuzzer's bytes into structured values: small numbers, choices, raw bytes and text.
//
// Compiled into every target that builds structured inputs (Scripts/fuzz). Reading past the end yields zeros, so
// every input, however short, describes a complete case; libFuzzer learns which bytes steer which choice.
import Foundation

struct FuzzInput {
    private let storage: [UInt8]
    private var offset = 0

    init(_ bytes: [UInt8]) {
        self.storage = bytes
    }

    /// Whether every byte has been read.
    var isExhausted: Bool { offset >= storage.count }

    /// The next byte, or 0 past the end.
    mutating func byte() -> UInt8 {
        guard offset < storage.count else { return 0 }
        defer { offset += 1 }
        return storage[offset]
    }

    /// A number in `0..<bound` (`bound` at most 256).
    mutating func int(below bound: Int) -> Int {
        Int(byte()) % max(bound, 1)
    }

    /// True for an odd byte.
    mutating func bool() -> Bool {
        byte() & 1 == 1
    }

    /// One of `choices`.
    mutating func pick<T>(_ choices: [T]) -> T {
        choices[int(below: choices.count)]
    }

    /// A little-endian integer of eight bytes.
    mutating func uint64() -> UInt64 {
        var value: UInt64 = 0
        for index in 0..<8 { value |= UInt64(byte()) << UInt64(8 * index) }
        return value
    }

    /// Up to `limit` raw bytes, the count taken from one byte.
    mutating func bytes(upTo limit: Int) -> [UInt8] {
        let count = min(int(below: limit + 1), storage.count - min(offset, storage.count))
        defer { offset += count }
        return Array(storage[offset..<offset + count])
    }

    /// Every byte not read yet.
    mutating func rest() -> [UInt8] {
        guard offset < storage.count else { return [] }
        defer { offset = storage.count }
        return Array(storage[offset...])
    }

    /// Pieces of text that tend to break encoders and parsers: line breaks, NUL, quotes, URL and query
    /// delimiters, percent signs with and without hex digits, a byte order mark, combining marks, a line separator.
    static let tokens: [String] = [
        "\r\n", "\r", "\n", "\0", "\"", "'", "\\", "%", "%0D%0A", "%22", "%zz", "%2F", "/", "//", "..", "?", "#",
        "[", "]", "&", "=", "+", " ", "\t", ";", ":", "@", ",", "é", "e\u{301}", "\u{FEFF}", "\u{2028}", "\u{85}",
        "😀", "\u{FFFD}", "boundary=", "multipart/", "--", "name=\"x\"", "Content-Type: ", "\r\n\r\n",
        "data:", "event:", "id:", "retry:", "{", "}", "null",
    ]

    /// Up to `limit` pieces of text: ASCII characters, entries of ``tokens`` and short runs of raw bytes decoded as
    /// UTF-8 (invalid sequences become U+FFFD, as any text that came from bytes would).
    mutating func text(upTo limit: Int) -> String {
        var text = ""
        for _ in 0..<int(below: limit + 1) {
            let selector = byte()
            switch selector {
            case 0..<0x80:
                text.unicodeScalars.append(Unicode.Scalar(selector))
            case 0x80..<0xC0:
                text += Self.tokens[Int(selector - 0x80) % Self.tokens.count]
            default:
                let run = [selector] + (0..<Int(selector % 4)).map { _ in byte() }
                text += String(decoding: run, as: UTF8.self)
            }
        }
        return text
    }
}
