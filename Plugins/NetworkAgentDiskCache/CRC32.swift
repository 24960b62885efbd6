import Foundation

/// CRC-32 (IEEE 802.3, the polynomial of zlib and PNG), the checksum of stored entries.
///
/// It catches what a cache has to fear from its own disk — a torn write, a truncated file, flipped bits — at a
/// fraction of a cryptographic hash's cost; nobody gains anything by forging an entry in the user's own cache
/// directory that they could not gain by writing the entry directly.
struct CRC32 {
    /// Slicing-by-8 tables: `tables[0]` is the classic byte table; `tables[k][i]` is the CRC of byte `i` followed
    /// by `k` zero bytes, so eight bytes are folded in per step with eight independent look-ups instead of a chain
    /// of eight dependent ones (the same checksum; the entry check of a Redis or disk hit verifies every byte).
    private static let tables: [UInt32] = {
        var tables = [UInt32](repeating: 0, count: 8 * 256)
        for index in 0..<256 {
            var value = UInt32(index)
            for _ in 0..<8 {
                value = value & 1 == 1 ? 0xedb8_8320 ^ (value >> 1) : value >> 1
            }
            tables[index] = value
        }
        for slice in 1..<8 {
            for index in 0..<256 {
                let previous = tables[(slice - 1) * 256 + index]
                tables[slice * 256 + index] = tables[Int(previous & 0xff)] ^ (previous >> 8)
            }
        }
        return tables
    }()

    private var crc: UInt32 = 0xffff_ffff

    init() {}

    /// Adds bytes.
    mutating func update(_ bytes: UnsafeRawBufferPointer) {
        var crc = self.crc
        Self.tables.withUnsafeBufferPointer { table in
            var index = 0
            let count = bytes.count
            while count - index >= 8 {
                let low = crc ^ UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: index, as: UInt32.self))
                let high = UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: index + 4, as: UInt32.self))
                crc =
                    table[7 * 256 + Int(low & 0xff)] ^ table[6 * 256 + Int((low >> 8) & 0xff)]
                    ^ table[5 * 256 + Int((low >> 16) & 0xff)] ^ table[4 * 256 + Int(low >> 24)]
                    ^ table[3 * 256 + Int(high & 0xff)] ^ table[2 * 256 + Int((high >> 8) & 0xff)]
                    ^ table[256 + Int((high >> 16) & 0xff)] ^ table[Int(high >> 24)]
                index += 8
            }
            while index < count {
                crc = table[Int((crc ^ UInt32(bytes[index])) & 0xff)] ^ (crc >> 8)
                index += 1
            }
        }
        self.crc = crc
    }

    /// Adds the bytes of a `Data`.
    mutating func update(_ data: Data) {
        data.withUnsafeBytes { update($0) }
    }

    /// The checksum of everything added so far.
    var value: UInt32 { crc ^ 0xffff_ffff }

    /// The checksum of one buffer.
    static func checksum(_ data: Data) -> UInt32 {
        var crc = CRC32()
        crc.update(data)
        return crc.value
    }
}
