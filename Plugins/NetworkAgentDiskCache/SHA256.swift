/// A small SHA-256 (FIPS 180-4), used to fingerprint credentials and to name entry files.
///
/// The cache needs a hash that two different users' credentials cannot be made to collide in, and that does not
/// reveal the credential when an entry's header is read from disk; a non-cryptographic hash gives neither. The core
/// must not depend on a crypto library, so this is the plain algorithm: correct, not tuned beyond keeping its
/// message schedule off the heap.
package struct SHA256 {
    private static let roundConstants: [UInt32] = [
        0x428a_2f98, 0x7137_4491, 0xb5c0_fbcf, 0xe9b5_dba5, 0x3956_c25b, 0x59f1_11f1, 0x923f_82a4, 0xab1c_5ed5,
        0xd807_aa98, 0x1283_5b01, 0x2431_85be, 0x550c_7dc3, 0x72be_5d74, 0x80de_b1fe, 0x9bdc_06a7, 0xc19b_f174,
        0xe49b_69c1, 0xefbe_4786, 0x0fc1_9dc6, 0x240c_a1cc, 0x2de9_2c6f, 0x4a74_84aa, 0x5cb0_a9dc, 0x76f9_88da,
        0x983e_5152, 0xa831_c66d, 0xb003_27c8, 0xbf59_7fc7, 0xc6e0_0bf3, 0xd5a7_9147, 0x06ca_6351, 0x1429_2967,
        0x27b7_0a85, 0x2e1b_2138, 0x4d2c_6dfc, 0x5338_0d13, 0x650a_7354, 0x766a_0abb, 0x81c2_c92e, 0x9272_2c85,
        0xa2bf_e8a1, 0xa81a_664b, 0xc24b_8b70, 0xc76c_51a3, 0xd192_e819, 0xd699_0624, 0xf40e_3585, 0x106a_a070,
        0x19a4_c116, 0x1e37_6c08, 0x2748_774c, 0x34b0_bcb5, 0x391c_0cb3, 0x4ed8_aa4a, 0x5b9c_ca4f, 0x682e_6ff3,
        0x748f_82ee, 0x78a5_636f, 0x84c8_7814, 0x8cc7_0208, 0x90be_fffa, 0xa450_6ceb, 0xbef9_a3f7, 0xc671_78f2,
    ]

    private var state: (UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32) = (
        0x6a09_e667, 0xbb67_ae85, 0x3c6e_f372, 0xa54f_f53a, 0x510e_527f, 0x9b05_688c, 0x1f83_d9ab, 0x5be0_cd19
    )
    /// The block being filled, 64 bytes kept in the hasher itself: a heap array for it, a copy of every update's
    /// bytes and the arrays of the padding and the digest were ten allocations per hash, and a storing miss hashes
    /// its key for the entry's identifier.
    private var block: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0, 0, 0, 0)
    /// How many bytes of ``block`` are filled.
    private var blockCount = 0
    private var length: UInt64 = 0

    init() {}

    /// Adds bytes to the message.
    mutating func update<Bytes: Sequence>(_ bytes: Bytes) where Bytes.Element == UInt8 {
        let done: Void? = bytes.withContiguousStorageIfAvailable { update(UnsafeRawBufferPointer($0)) }
        guard done == nil else { return }
        for byte in bytes {
            length &+= 1
            append(byte)
        }
    }

    /// Adds the bytes of a buffer.
    mutating func update(_ bytes: UnsafeRawBufferPointer) {
        let count = bytes.count
        length &+= UInt64(count)
        var offset = 0
        if blockCount > 0 {
            let taken = min(64 - blockCount, count)
            fill(from: bytes, offset: 0, count: taken)
            offset = taken
            guard blockCount == 64 else { return }
            compressBlock()
        }
        while count - offset >= 64 {
            compress(UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + 64]))
            offset += 64
        }
        fill(from: bytes, offset: offset, count: count - offset)
    }

    /// Adds the UTF-8 bytes of a string.
    mutating func update(_ text: String) {
        var text = text
        // A native string's own bytes (`withUTF8` makes a bridged one native first), without copying them.
        text.withUTF8 { update(UnsafeRawBufferPointer($0)) }
    }

    /// Copies `count` bytes from `bytes[offset...]` into the block; the caller keeps the block from overflowing.
    private mutating func fill(from bytes: UnsafeRawBufferPointer, offset: Int, count: Int) {
        guard count > 0, let source = bytes.baseAddress else { return }
        let start = blockCount
        withUnsafeMutableBytes(of: &block) { block in
            guard let target = block.baseAddress else { return }
            (target + start).copyMemory(from: source + offset, byteCount: count)
        }
        blockCount += count
    }

    /// Adds one byte to the block (not to the message length: the padding uses it too).
    private mutating func append(_ byte: UInt8) {
        let index = blockCount
        withUnsafeMutableBytes(of: &block) { $0[index] = byte }
        blockCount += 1
        if blockCount == 64 { compressBlock() }
    }

    /// Compresses the full block and empties it.
    private mutating func compressBlock() {
        let full = block
        withUnsafeBytes(of: full) { compress($0) }
        blockCount = 0
    }

    /// Pads the message and returns the final state, the digest's eight words.
    private mutating func finish() -> (UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32) {
        let bitLength = length &* 8
        append(0x80)
        while blockCount != 56 { append(0) }
        for shift in stride(from: 56, through: 0, by: -8) {
            append(UInt8(truncatingIfNeeded: bitLength >> UInt64(shift)))
        }
        return state
    }

    /// Pads the message and returns the 32-byte digest.
    mutating func finalize() -> [UInt8] {
        let words = finish()
        var digest: [UInt8] = []
        digest.reserveCapacity(32)
        for word in [words.0, words.1, words.2, words.3, words.4, words.5, words.6, words.7] {
            digest.append(UInt8(truncatingIfNeeded: word >> 24))
            digest.append(UInt8(truncatingIfNeeded: word >> 16))
            digest.append(UInt8(truncatingIfNeeded: word >> 8))
            digest.append(UInt8(truncatingIfNeeded: word))
        }
        return digest
    }

    /// ``finalize()`` as 64 lowercase hex digits, ``hexString(_:)`` of the digest without the digest's array.
    mutating func finalizeHex() -> String {
        let words = finish()
        let bigEndian = (
            words.0.bigEndian, words.1.bigEndian, words.2.bigEndian, words.3.bigEndian, words.4.bigEndian,
            words.5.bigEndian, words.6.bigEndian, words.7.bigEndian
        )
        return withUnsafeBytes(of: bigEndian) { Self.hexString($0) }
    }

    /// The digest of a string's UTF-8 bytes as 64 lowercase hex digits.
    package static func hex(_ text: String) -> String {
        var hasher = SHA256()
        hasher.update(text)
        return hasher.finalizeHex()
    }

    /// Lowercase hex digits of bytes.
    static func hexString(_ bytes: [UInt8]) -> String {
        bytes.withUnsafeBytes { hexString($0) }
    }

    /// Lowercase hex digits of bytes, written straight into the string's storage.
    static func hexString(_ bytes: UnsafeRawBufferPointer) -> String {
        String(unsafeUninitializedCapacity: bytes.count * 2) { characters in
            for (index, byte) in bytes.enumerated() {
                characters[2 * index] = hexDigit(byte >> 4)
                characters[2 * index + 1] = hexDigit(byte & 0x0f)
            }
            return bytes.count * 2
        }
    }

    private static func hexDigit(_ value: UInt8) -> UInt8 {
        value < 10 ? UInt8(ascii: "0") + value : UInt8(ascii: "a") + value - 10
    }

    /// Folds one 64-byte block into the state.
    private mutating func compress(_ block: UnsafeRawBufferPointer) {
        // The message schedule lives on the stack: a heap array per 64-byte block showed in the profile of a
        // storable miss, which hashes the entry's key for its file name.
        state = withUnsafeTemporaryAllocation(of: UInt32.self, capacity: 64) { words in
            for index in 0..<16 {
                words[index] = UInt32(bigEndian: block.loadUnaligned(fromByteOffset: index * 4, as: UInt32.self))
            }
            for index in 16..<64 {
                let w15 = words[index - 15]
                let w2 = words[index - 2]
                let s0 = w15.rotatedRight(7) ^ w15.rotatedRight(18) ^ (w15 >> 3)
                let s1 = w2.rotatedRight(17) ^ w2.rotatedRight(19) ^ (w2 >> 10)
                words[index] = words[index - 16] &+ s0 &+ words[index - 7] &+ s1
            }
            var (a, b, c, d, e, f, g, h) = state
            Self.roundConstants.withUnsafeBufferPointer { constants in
                for index in 0..<64 {
                    let s1 = e.rotatedRight(6) ^ e.rotatedRight(11) ^ e.rotatedRight(25)
                    let choice = (e & f) ^ (~e & g)
                    let temp1 = h &+ s1 &+ choice &+ constants[index] &+ words[index]
                    let s0 = a.rotatedRight(2) ^ a.rotatedRight(13) ^ a.rotatedRight(22)
                    let majority = (a & b) ^ (a & c) ^ (b & c)
                    let temp2 = s0 &+ majority
                    h = g
                    g = f
                    f = e
                    e = d &+ temp1
                    d = c
                    c = b
                    b = a
                    a = temp1 &+ temp2
                }
            }
            return (
                state.0 &+ a, state.1 &+ b, state.2 &+ c, state.3 &+ d, state.4 &+ e, state.5 &+ f, state.6 &+ g,
                state.7 &+ h
            )
        }
    }
}

extension UInt32 {
    fileprivate func rotatedRight(_ count: UInt32) -> UInt32 {
        (self >> count) | (self << (32 - count))
    }
}
