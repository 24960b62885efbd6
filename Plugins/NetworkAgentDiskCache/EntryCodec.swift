import Foundation

/// The on-disk form of a ``CachedEntry``: a fixed prefix, the key, the response's metadata, the body and a checksum.
///
/// ```
/// offset    size  field
///      0       4  magic "NACE"
///      4       1  format version (1)
///      5       3  reserved, zero
///      8       4  key length K, UInt32 little-endian
///     12       4  metadata length M, UInt32 little-endian
///     16       8  body length B, UInt64 little-endian
///     24       4  CRC-32 of bytes 0..<24 and the key
///     28       K  key: method, URL, credential fingerprint, variant digest (strings), vary names (a list)
///   28+K       M  metadata: status, request and response times, response URL, header fields
/// 28+K+M       B  body
/// 28+K+M+B     4  CRC-32 of everything before it
/// ```
///
/// A string is a UInt32 byte count and UTF-8 bytes; a list is a UInt32 count and its items; a time is the bit
/// pattern of a `Double` of seconds since 1970 as UInt64; all integers little-endian. The key checksum lets a store
/// rebuild its index from the prefixes and keys alone, without reading metadata or body; the file length must be
/// exactly `32 + K + M + B`. The trailing checksum covers the whole entry and is verified before an entry is
/// served. Any mismatch — a torn write, a truncated file, flipped bits — is a ``Failure``, and the entry is dropped.
package enum EntryCodec {
    /// Why bytes are not a valid entry.
    package enum Failure: Error, Equatable {
        case badMagic
        case unsupportedVersion
        case badLength
        case keyChecksum
        case checksum
        case badKey
        case badMetadata
    }

    /// The lengths declared by an entry's prefix.
    struct Prefix: Equatable {
        let keyLength: Int
        let metadataLength: Int
        let bodyLength: Int
        let keyChecksum: UInt32

        /// The exact length of a valid entry file with this prefix.
        var totalLength: Int {
            EntryCodec.prefixLength + keyLength + metadataLength + bodyLength + EntryCodec.trailerLength
        }
    }

    static let magic: [UInt8] = Array("NACE".utf8)
    static let version: UInt8 = 1
    static let prefixLength = 28
    static let trailerLength = 4
    /// Keys and metadata beyond this are refused when read back: a length field this large means corruption.
    static let maximumSectionLength = 4 << 20

    /// Encodes an entry.
    package static func encode(_ entry: CachedEntry) -> Data {
        Data(encodedBytes(entry))
    }

    /// ``encode(_:)``'s bytes as they are written, for a caller that writes them out as they are (a disk store's
    /// append): no `Data` (two more allocations and a copy of the whole entry) is made of them.
    static func encodedBytes(_ entry: CachedEntry) -> [UInt8] {
        let key = entry.key
        let responseURL = entry.responseURL.absoluteString
        let headers = entry.headers.sorted { $0.key < $1.key }
        // The section lengths are known before a byte is written, so the entry is written once, in order, into a
        // buffer of exactly its size: no section is built apart and copied, and nothing grows.
        let keyLength =
            16 + key.method.utf8.count + key.url.utf8.count + key.credential.utf8.count + key.variant.utf8.count
            + 4 + key.varyNames.reduce(0) { $0 + 4 + $1.utf8.count }
        let metadataLength =
            4 + 8 + 8 + 4 + responseURL.utf8.count + 4
            + headers.reduce(0) { $0 + 8 + $1.key.utf8.count + $1.value.utf8.count }
        let bodyStart = prefixLength + keyLength + metadataLength
        let total = bodyStart + entry.body.count + trailerLength
        var writer = Writer()
        writer.bytes.reserveCapacity(total)
        writer.bytes += magic
        writer.bytes += [version, 0, 0, 0]
        writer.integer(UInt64(keyLength), bytes: 4)
        writer.integer(UInt64(metadataLength), bytes: 4)
        writer.integer(UInt64(entry.body.count), bytes: 8)
        writer.integer(0, bytes: 4)  // the key checksum, once the key is written
        writer.string(key.method)
        writer.string(key.url)
        writer.string(key.credential)
        writer.string(key.variant)
        writer.list(key.varyNames) { $0.string($1) }
        writer.integer(UInt64(UInt32(clamping: entry.statusCode)), bytes: 4)
        writer.integer(entry.requestDate.timeIntervalSince1970.bitPattern, bytes: 8)
        writer.integer(entry.responseDate.timeIntervalSince1970.bitPattern, bytes: 8)
        writer.string(responseURL)
        writer.list(headers) { writer, field in
            writer.string(field.key)
            writer.string(field.value)
        }
        entry.body.withUnsafeBytes { writer.bytes.append(contentsOf: $0.assumingMemoryBound(to: UInt8.self)) }
        assert(writer.bytes.count == bodyStart + entry.body.count, "the section lengths were computed wrongly")
        var keyCRC = CRC32()
        writer.bytes.withUnsafeBytes { bytes in
            keyCRC.update(UnsafeRawBufferPointer(rebasing: bytes[0..<24]))
            keyCRC.update(UnsafeRawBufferPointer(rebasing: bytes[prefixLength..<prefixLength + keyLength]))
        }
        writer.set(UInt64(keyCRC.value), bytes: 4, at: 24)
        var checksum = CRC32()
        writer.bytes.withUnsafeBytes { checksum.update($0) }
        writer.integer(UInt64(checksum.value), bytes: 4)
        return writer.bytes
    }

    /// Reads and checks the fixed prefix (the first ``prefixLength`` bytes).
    static func decodePrefix(_ bytes: Data) throws(Failure) -> Prefix {
        guard bytes.count >= prefixLength else { throw .badLength }
        let start = bytes.startIndex
        guard bytes[start..<start + 4].elementsEqual(magic) else { throw .badMagic }
        guard bytes[start + 4] == version else { throw .unsupportedVersion }
        let keyLength = read(bytes, at: 8, count: 4)
        let metadataLength = read(bytes, at: 12, count: 4)
        let bodyLength = read(bytes, at: 16, count: 8)
        guard keyLength <= UInt64(maximumSectionLength), metadataLength <= UInt64(maximumSectionLength),
            bodyLength <= UInt64(Int32.max)
        else { throw .badLength }
        return Prefix(
            keyLength: Int(keyLength),
            metadataLength: Int(metadataLength),
            bodyLength: Int(bodyLength),
            keyChecksum: UInt32(read(bytes, at: 24, count: 4))
        )
    }

    /// Checks the key checksum and decodes the key, given the prefix bytes and the key bytes.
    static func decodeKey(prefixBytes: Data, prefix: Prefix, keyBytes: Data) throws(Failure) -> CacheKey {
        guard keyBytes.count == prefix.keyLength, prefixBytes.count >= 24 else { throw .badLength }
        var crc = CRC32()
        crc.update(prefixBytes.prefix(24))
        crc.update(keyBytes)
        guard crc.value == prefix.keyChecksum else { throw .keyChecksum }
        var reader = Reader(keyBytes)
        do throws(Failure) {
            let method = try reader.string()
            let url = try reader.string()
            let credential = try reader.string()
            let variant = try reader.string()
            let varyNames = try reader.list { (reader: inout Reader) throws(Failure) in try reader.string() }
            guard reader.isAtEnd else { throw Failure.badKey }
            return CacheKey(method: method, url: url, credential: credential, varyNames: varyNames, variant: variant)
        } catch {
            throw .badKey
        }
    }

    /// Decodes a whole entry file, verifying both checksums and the length.
    package static func decode(_ data: Data) throws(Failure) -> CachedEntry {
        let prefix = try decodePrefix(data)
        guard data.count == prefix.totalLength else { throw .badLength }
        let start = data.startIndex
        let checked = data.count - trailerLength
        guard UInt32(read(data, at: checked, count: 4)) == CRC32.checksum(data[start..<start + checked]) else {
            throw .checksum
        }
        let keyStart = start + prefixLength
        let key = try decodeKey(
            prefixBytes: data[start..<keyStart],
            prefix: prefix,
            keyBytes: data[keyStart..<keyStart + prefix.keyLength]
        )
        let metadataStart = keyStart + prefix.keyLength
        let bodyStart = metadataStart + prefix.metadataLength
        var reader = Reader(data[metadataStart..<bodyStart])
        do throws(Failure) {
            let status = Int(try reader.integer(bytes: 4))
            let requestTime = Double(bitPattern: try reader.integer(bytes: 8))
            let responseTime = Double(bitPattern: try reader.integer(bytes: 8))
            guard let url = URL(string: try reader.string()) else { throw Failure.badMetadata }
            let fields = try reader.list { (reader: inout Reader) throws(Failure) in
                (try reader.string(), try reader.string())
            }
            guard reader.isAtEnd, requestTime.isFinite, responseTime.isFinite else { throw Failure.badMetadata }
            return CachedEntry(
                key: key,
                responseURL: url,
                statusCode: status,
                headers: Dictionary(fields) { _, last in last },
                body: Data(data[bodyStart..<bodyStart + prefix.bodyLength]),
                requestDate: Date(timeIntervalSince1970: requestTime),
                responseDate: Date(timeIntervalSince1970: responseTime)
            )
        } catch {
            throw .badMetadata
        }
    }

    private static func read(_ data: Data, at offset: Int, count: Int) -> UInt64 {
        littleEndian(data, from: data.startIndex + offset, count: count)
    }

    /// The little-endian integer in `count` (at most 8) bytes of `data` from the index `start`, which the caller
    /// has checked are there. One pass over the raw bytes: subscripting `Data` byte by byte costs a representation
    /// switch per byte, which showed in the profile of a Redis hit.
    static func littleEndian(_ data: Data, from start: Int, count: Int) -> UInt64 {
        data.withUnsafeBytes { bytes -> UInt64 in
            let base = start - data.startIndex
            var value: UInt64 = 0
            for index in 0..<count { value |= UInt64(bytes[base + index]) << UInt64(8 * index) }
            return value
        }
    }

    /// Appends little-endian integers, strings and lists (entries, and the log's marks).
    struct Writer {
        var bytes: [UInt8] = []

        mutating func integer(_ value: UInt64, bytes count: Int) {
            for index in 0..<count { bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(8 * index))) }
        }

        /// Overwrites `count` bytes at `offset` with `value`, little-endian.
        mutating func set(_ value: UInt64, bytes count: Int, at offset: Int) {
            for index in 0..<count { bytes[offset + index] = UInt8(truncatingIfNeeded: value >> UInt64(8 * index)) }
        }

        mutating func string(_ text: String) {
            integer(UInt64(text.utf8.count), bytes: 4)
            bytes += text.utf8
        }

        mutating func list<Item>(_ items: [Item], _ write: (inout Writer, Item) -> Void) {
            integer(UInt64(items.count), bytes: 4)
            for item in items { write(&self, item) }
        }
    }

    /// Reads what ``Writer`` wrote, refusing to read past the end.
    private struct Reader {
        let data: Data
        var offset: Int

        init(_ data: Data) {
            self.data = data
            self.offset = data.startIndex
        }

        var isAtEnd: Bool { offset == data.endIndex }

        mutating func integer(bytes count: Int) throws(Failure) -> UInt64 {
            guard data.endIndex - offset >= count else { throw .badLength }
            let value = EntryCodec.littleEndian(data, from: offset, count: count)
            offset += count
            return value
        }

        mutating func string() throws(Failure) -> String {
            let count = Int(try integer(bytes: 4))
            guard data.endIndex - offset >= count else { throw .badLength }
            let start = offset - data.startIndex
            let text = data.withUnsafeBytes { bytes in
                String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<start + count]), as: UTF8.self)
            }
            offset += count
            return text
        }

        mutating func list<Item>(_ read: (inout Reader) throws(Failure) -> Item) throws(Failure) -> [Item] {
            let count = Int(try integer(bytes: 4))
            // Every item takes at least four bytes: a count larger than that is corruption, not a reason to allocate.
            guard count <= (data.endIndex - offset) / 4 else { throw .badLength }
            var items: [Item] = []
            items.reserveCapacity(count)
            for _ in 0..<count { items.append(try read(&self)) }
            return items
        }
    }
}
