import Foundation

/// The on-disk form of a ``CachedEntry``: a fixed prefix, a JSON header, the body and a checksum.
///
/// ```
/// offset  size  field
///      0     4  magic "NACE"
///      4     1  format version (1)
///      5     3  reserved, zero
///      8     4  header length H, UInt32 little-endian
///     12     8  body length B, UInt64 little-endian
///     20     4  CRC-32 of bytes 0..<20 and the header
///     24     H  header: JSON (key, status, URL, header fields, request and response times)
///   24+H     B  body
/// 24+H+B     4  CRC-32 of bytes 0..<24+H+B (everything before it)
/// ```
///
/// The header checksum lets a store rebuild its index from the prefixes and headers alone, without reading a
/// body; the file length must be exactly `28 + H + B`. The trailing checksum covers the whole entry and is verified
/// before an entry is served. Any mismatch — a torn write, a truncated file, a flipped bit — is a
/// ``Failure``, and the entry is dropped.
enum EntryCodec {
    /// Why bytes are not a valid entry.
    enum Failure: Error, Equatable {
        case badMagic
        case unsupportedVersion
        case badLength
        case headerChecksum
        case checksum
        case badHeader
    }

    /// The lengths declared by an entry's prefix.
    struct Prefix: Equatable {
        let headerLength: Int
        let bodyLength: Int
        let headerChecksum: UInt32

        /// The exact length of a valid entry file with this prefix.
        var totalLength: Int { EntryCodec.prefixLength + headerLength + bodyLength + EntryCodec.trailerLength }
    }

    /// The header as stored, JSON-encoded.
    struct Header: Codable, Equatable {
        var method: String
        var url: String
        var credential: String
        var varyNames: [String]
        var variant: String
        var responseURL: String
        var status: Int
        var headers: [String: String]
        var requestTime: Double
        var responseTime: Double

        var key: CacheKey {
            CacheKey(method: method, url: url, credential: credential, varyNames: varyNames, variant: variant)
        }
    }

    static let magic: [UInt8] = Array("NACE".utf8)
    static let version: UInt8 = 1
    static let prefixLength = 24
    static let trailerLength = 4
    /// Headers beyond this are refused when read back: a length field this large means corruption.
    static let maximumHeaderLength = 4 << 20

    /// Encodes an entry.
    static func encode(_ entry: CachedEntry) throws -> Data {
        let header = Header(
            method: entry.key.method,
            url: entry.key.url,
            credential: entry.key.credential,
            varyNames: entry.key.varyNames,
            variant: entry.key.variant,
            responseURL: entry.responseURL.absoluteString,
            status: entry.statusCode,
            headers: entry.headers,
            requestTime: entry.requestDate.timeIntervalSince1970,
            responseTime: entry.responseDate.timeIntervalSince1970
        )
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let headerBytes = try encoder.encode(header)
        var data = Data(capacity: prefixLength + headerBytes.count + entry.body.count + trailerLength)
        data.append(contentsOf: magic)
        data.append(contentsOf: [version, 0, 0, 0])
        append(UInt64(headerBytes.count), bytes: 4, to: &data)
        append(UInt64(entry.body.count), bytes: 8, to: &data)
        var headerCRC = CRC32()
        headerCRC.update(data)
        headerCRC.update(headerBytes)
        append(UInt64(headerCRC.value), bytes: 4, to: &data)
        data.append(headerBytes)
        data.append(entry.body)
        append(UInt64(CRC32.checksum(data)), bytes: 4, to: &data)
        return data
    }

    /// Reads and checks the fixed prefix (the first ``prefixLength`` bytes).
    static func decodePrefix(_ bytes: Data) throws(Failure) -> Prefix {
        guard bytes.count >= prefixLength else { throw .badLength }
        let start = bytes.startIndex
        guard Array(bytes[start..<start + 4]) == magic else { throw .badMagic }
        guard bytes[start + 4] == version else { throw .unsupportedVersion }
        let headerLength = read(bytes, at: 8, count: 4)
        let bodyLength = read(bytes, at: 12, count: 8)
        guard headerLength <= UInt64(maximumHeaderLength), bodyLength <= UInt64(Int.max / 2) else { throw .badLength }
        return Prefix(
            headerLength: Int(headerLength),
            bodyLength: Int(bodyLength),
            headerChecksum: UInt32(read(bytes, at: 20, count: 4))
        )
    }

    /// Checks the header checksum and decodes the header, given the prefix bytes and the header bytes.
    static func decodeHeader(prefixBytes: Data, prefix: Prefix, headerBytes: Data) throws(Failure) -> Header {
        guard headerBytes.count == prefix.headerLength else { throw .badLength }
        var crc = CRC32()
        crc.update(prefixBytes.prefix(20))
        crc.update(headerBytes)
        guard crc.value == prefix.headerChecksum else { throw .headerChecksum }
        do {
            return try JSONDecoder().decode(Header.self, from: headerBytes)
        } catch {
            throw .badHeader
        }
    }

    /// Decodes a whole entry file, verifying both checksums and the length.
    static func decode(_ data: Data) throws(Failure) -> CachedEntry {
        let prefix = try decodePrefix(data)
        guard data.count == prefix.totalLength else { throw .badLength }
        let start = data.startIndex
        let checked = data.count - trailerLength
        guard UInt32(read(data, at: checked, count: 4)) == CRC32.checksum(data[start..<start + checked]) else {
            throw .checksum
        }
        let headerStart = start + prefixLength
        let header = try decodeHeader(
            prefixBytes: data[start..<start + prefixLength],
            prefix: prefix,
            headerBytes: data[headerStart..<headerStart + prefix.headerLength]
        )
        let bodyStart = headerStart + prefix.headerLength
        guard let url = URL(string: header.responseURL) else { throw .badHeader }
        return CachedEntry(
            key: header.key,
            responseURL: url,
            statusCode: header.status,
            headers: header.headers,
            body: Data(data[bodyStart..<bodyStart + prefix.bodyLength]),
            requestDate: Date(timeIntervalSince1970: header.requestTime),
            responseDate: Date(timeIntervalSince1970: header.responseTime)
        )
    }

    private static func append(_ value: UInt64, bytes count: Int, to data: inout Data) {
        for index in 0..<count {
            data.append(UInt8(truncatingIfNeeded: value >> UInt64(8 * index)))
        }
    }

    private static func read(_ data: Data, at offset: Int, count: Int) -> UInt64 {
        var value: UInt64 = 0
        let start = data.startIndex + offset
        for index in 0..<count {
            value |= UInt64(data[start + index]) << UInt64(8 * index)
        }
        return value
    }
}
