/// RFC 3986 percent-encoding with explicit allowed sets, independent of Foundation's character sets.
enum PercentEncoding {
    /// Unreserved characters: `A-Z a-z 0-9 - . _ ~`. Everything else is encoded in queries and forms.
    static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        case UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"): true
        default: false
        }
    }

    /// `pchar` minus `%`: unreserved, sub-delims, `:` and `@`. Allowed unencoded inside a path segment.
    static func isPathCharacter(_ byte: UInt8) -> Bool {
        if isUnreserved(byte) { return true }
        return switch byte {
        case UInt8(ascii: "!"), UInt8(ascii: "$"), UInt8(ascii: "&"), UInt8(ascii: "'"), UInt8(ascii: "("),
            UInt8(ascii: ")"), UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: ","), UInt8(ascii: ";"),
            UInt8(ascii: "="), UInt8(ascii: ":"), UInt8(ascii: "@"):
            true
        default: false
        }
    }

    /// Encodes the UTF-8 bytes of `text`, keeping the bytes `allowed` says yes to.
    static func encode(_ text: some StringProtocol, allowing allowed: (UInt8) -> Bool = isUnreserved) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            if allowed(byte) {
                bytes.append(byte)
            } else {
                bytes.append(UInt8(ascii: "%"))
                bytes.append(hexDigit(byte >> 4))
                bytes.append(hexDigit(byte & 0x0F))
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The uppercase hexadecimal digit of a value below 16.
    private static func hexDigit(_ value: UInt8) -> UInt8 {
        value < 10 ? UInt8(ascii: "0") + value : UInt8(ascii: "A") + value - 10
    }
}
