import Foundation
import Testing

@testable import NetworkAgentDiskCache

/// The hand-written hashes. (The HTTP date parser is the core's: `HTTPDateTests`.)
@Suite struct PrimitiveTests {
    @Test(arguments: [
        ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
        ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
        (
            "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
        ),
        (String(repeating: "a", count: 55), "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318"),
        (String(repeating: "a", count: 56), "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a"),
        (String(repeating: "a", count: 64), "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb"),
        (String(repeating: "a", count: 1_000), "41edece42d63e8d9bf515a9ba6932e1c20cbc9f5a5d134645adb5db1b9737ea3"),
    ])
    func sha256MatchesKnownDigests(_ input: String, _ digest: String) {
        #expect(SHA256.hex(input) == digest)
    }

    /// The hasher fills its block across updates: a message split at every offset (and in three, around the block
    /// and padding edges), fed as a string, a buffer or a sequence without contiguous storage, digests the same.
    @Test func sha256DigestsAMessageSplitAnywhereTheSame() {
        for length in [0, 1, 55, 56, 63, 64, 65, 119, 120, 128, 130] {
            let message = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
            var whole = SHA256()
            whole.update(message)
            let expected = whole.finalize()
            var sequence = SHA256()
            sequence.update(message.lazy.map { $0 })
            #expect(sequence.finalize() == expected, "length \(length), a sequence")
            for split in 0...length {
                var hasher = SHA256()
                hasher.update(message[..<split])
                let middle = min(length, split + 61)
                message[split..<middle].withUnsafeBytes { hasher.update($0) }
                hasher.update(message[middle...].map { $0 })
                #expect(hasher.finalizeHex() == SHA256.hexString(expected), "length \(length), split at \(split)")
            }
        }
        var parts = SHA256()
        for part in ["GET https://example.com/a #", String(repeating: "c", count: 64), "\n", ""] { parts.update(part) }
        #expect(
            parts.finalizeHex() == SHA256.hex("GET https://example.com/a #" + String(repeating: "c", count: 64) + "\n")
        )
        #expect(SHA256.hexString([0x00, 0x0f, 0xa0, 0xff]) == "000fa0ff")
    }

    @Test func crc32MatchesTheCheckValue() {
        #expect(CRC32.checksum(Data("123456789".utf8)) == 0xcbf4_3926)
        #expect(CRC32.checksum(Data()) == 0)
    }

    /// Lengths around the 8-byte steps, and updates split at every offset, agree with a bit-at-a-time reference.
    @Test func crc32MatchesABitwiseReferenceAtEveryLengthAndSplit() {
        #expect(CRC32.checksum(Data("The quick brown fox jumps over the lazy dog".utf8)) == 0x414f_a339)
        let bytes = Data((0..<41).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) })
        for length in 0...bytes.count {
            let prefix = bytes.prefix(length)
            #expect(CRC32.checksum(prefix) == Self.bitwiseCRC32(prefix), "length \(length)")
        }
        for split in 0...bytes.count {
            var crc = CRC32()
            crc.update(bytes.prefix(split))
            crc.update(bytes.dropFirst(split))
            #expect(crc.value == Self.bitwiseCRC32(bytes), "split at \(split)")
        }
    }

    private static func bitwiseCRC32(_ data: Data) -> UInt32 {
        var crc: UInt32 = 0xffff_ffff
        for byte in data {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? 0xedb8_8320 ^ (crc >> 1) : crc >> 1 }
        }
        return crc ^ 0xffff_ffff
    }
}
