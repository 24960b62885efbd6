import Foundation

/// Splits bytes into lines at LF, CRLF or a lone CR, across chunk boundaries, and decodes each line as UTF-8
/// (a character split between chunks is reassembled; invalid bytes become U+FFFD).
struct LineSplitter {
    /// The longest line accepted, in bytes: 1 MiB unless set.
    let maximumLineLength: Int
    private var line: [UInt8] = []
    private var afterCR = false

    init(maximumLineLength: Int = 1 << 20) {
        self.maximumLineLength = maximumLineLength
    }

    /// The lines completed by `chunk`.
    mutating func feed(_ chunk: Data) throws(NetworkAgentError) -> [String] {
        var lines: [String] = []
        for byte in chunk {
            if afterCR {
                afterCR = false
                if byte == UInt8(ascii: "\n") { continue }
            }
            switch byte {
            case UInt8(ascii: "\n"), UInt8(ascii: "\r"):
                lines.append(String(decoding: line, as: UTF8.self))
                line.removeAll(keepingCapacity: true)
                afterCR = byte == UInt8(ascii: "\r")
            default:
                guard line.count < maximumLineLength else {
                    throw NetworkAgentError(
                        .invalidResponse,
                        "a streamed line is longer than \(maximumLineLength) bytes"
                    )
                }
                line.append(byte)
            }
        }
        return lines
    }

    /// The last line, if the body did not end with a line break.
    mutating func finish() -> String? {
        defer { line = [] }
        return line.isEmpty ? nil : String(decoding: line, as: UTF8.self)
    }
}
