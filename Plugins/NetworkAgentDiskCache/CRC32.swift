import Foundation

/// CRC-32 (IEEE 802.3, the polynomial of zlib and PNG), the checksum of stored entries.
///
/// It catches what a cache has to fear from its own disk — a torn write, a truncated file, flipped bits — at a
/// fraction of a cryptographic hash's cost; nobody gains anything by forging an entry in the user's own cache
/// directory that they could not gain by writing the entry directly.
struct CRC32 {
    private static let table: [UInt32] = (0..<256).map { index in
        var value = UInt32(index)
        for _ in 0..<8 {
            value = value & 1 == 1 ? 0xedb8_8320 ^ (value >> 1) : value >> 1
        }
        return value
    }

    private var crc: UInt32 = 0xffff_ffff

    init() {}

    /// Adds bytes.
    mutating func update(_ bytes: UnsafeRawBufferPointer) {
        var crc = self.crc
        Self.table.withUnsafeBufferPointer { table in
            for byte in bytes {
                crc = table[Int((crc ^ UInt32(byte)) & 0xff)] ^ (crc >> 8)
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
