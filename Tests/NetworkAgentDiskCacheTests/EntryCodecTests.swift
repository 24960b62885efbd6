import Foundation
import Testing

@testable import NetworkAgentDiskCache

/// The on-disk entry format: round trips, and every kind of damage is caught.
@Suite struct EntryCodecTests {
    @Test func anEntryRoundTrips() throws {
        let entry = EntryFactory.entry(
            "/a?b=1",
            body: Data((0..<1_000).map { UInt8($0 % 256) }),
            headers: ["ETag": "\"x\""]
        )
        let data = EntryCodec.encode(entry)
        #expect(Array(data.prefix(4)) == Array("NACE".utf8))
        #expect(try EntryCodec.decode(data) == entry)
        let prefix = try EntryCodec.decodePrefix(data)
        #expect(prefix.totalLength == data.count)
        #expect(prefix.bodyLength == 1_000)
    }

    @Test func everyFlippedByteIsDetected() throws {
        let data = EntryCodec.encode(EntryFactory.entry("/flip", body: Data("0123456789".utf8)))
        for index in data.indices {
            var damaged = data
            damaged[index] ^= 0x20
            #expect(throws: EntryCodec.Failure.self, "byte \(index)") { try EntryCodec.decode(damaged) }
        }
    }

    @Test func everyTruncationIsDetected() throws {
        let data = EntryCodec.encode(EntryFactory.entry("/cut"))
        for length in 0..<data.count {
            #expect(throws: EntryCodec.Failure.self, "length \(length)") { try EntryCodec.decode(data.prefix(length)) }
        }
        #expect(throws: EntryCodec.Failure.badLength) { try EntryCodec.decode(data + Data([0])) }
    }

    @Test func anotherFormatVersionIsRefused() throws {
        var data = EntryCodec.encode(EntryFactory.entry("/v"))
        data[4] = 2
        #expect(throws: EntryCodec.Failure.unsupportedVersion) { try EntryCodec.decode(data) }
    }

    /// The encoder writes each entry once into a buffer of its exact size; the bytes are those the earlier encoder
    /// (sections built apart and joined, kept below) wrote, so files written before still read and vice versa.
    @Test func theSinglePassEncoderWritesTheBytesOfTheSectionwiseOne() throws {
        let keyed = CacheKey(
            method: "GET",
            url: "https://store.test/ü/päth?q=1",
            credential: "f1ngerpr1nt",
            varyNames: ["accept-language", "x-é"],
            variant: "d1gest"
        )
        var entries = [
            EntryFactory.entry("/plain"),
            EntryFactory.entry("/empty", body: Data(), headers: [:]),
            EntryFactory.entry(
                "/big",
                body: Data((0..<70_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }),
                headers: ["ETag": "\"x\"", "Content-Type": "text/plain; charset=utf-8", "X-Ünicode": "wért"]
            ),
        ]
        var varied = EntryFactory.entry("/varied", headers: ["Vary": "Accept-Language, X-É"])
        varied.key = keyed
        varied.statusCode = 203
        entries.append(varied)
        var noHeaders = EntryFactory.entry("/none")
        noHeaders.headers = [:]
        entries.append(noHeaders)
        for entry in entries {
            let data = EntryCodec.encode(entry)
            #expect(data == Self.sectionwiseEncoding(entry), "\(entry.key.url)")
            #expect(try EntryCodec.decode(data) == entry)
        }
    }

    /// The encoder as it was before the single-pass one: the key and the metadata built as sections of their own,
    /// joined, the body appended, the checksum last.
    static func sectionwiseEncoding(_ entry: CachedEntry) -> Data {
        func integer(_ value: UInt64, _ count: Int, into bytes: inout [UInt8]) {
            for index in 0..<count { bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(8 * index))) }
        }
        func string(_ text: String, into bytes: inout [UInt8]) {
            integer(UInt64(text.utf8.count), 4, into: &bytes)
            bytes += text.utf8
        }
        var key: [UInt8] = []
        for text in [entry.key.method, entry.key.url, entry.key.credential, entry.key.variant] {
            string(text, into: &key)
        }
        integer(UInt64(entry.key.varyNames.count), 4, into: &key)
        for name in entry.key.varyNames { string(name, into: &key) }
        var metadata: [UInt8] = []
        integer(UInt64(UInt32(clamping: entry.statusCode)), 4, into: &metadata)
        integer(entry.requestDate.timeIntervalSince1970.bitPattern, 8, into: &metadata)
        integer(entry.responseDate.timeIntervalSince1970.bitPattern, 8, into: &metadata)
        string(entry.responseURL.absoluteString, into: &metadata)
        let headers = entry.headers.sorted { $0.key < $1.key }
        integer(UInt64(headers.count), 4, into: &metadata)
        for (name, value) in headers {
            string(name, into: &metadata)
            string(value, into: &metadata)
        }
        var data: [UInt8] = Array("NACE".utf8) + [1, 0, 0, 0]
        integer(UInt64(key.count), 4, into: &data)
        integer(UInt64(metadata.count), 4, into: &data)
        integer(UInt64(entry.body.count), 8, into: &data)
        var keyCRC = CRC32()
        data.withUnsafeBytes { keyCRC.update($0) }
        key.withUnsafeBytes { keyCRC.update($0) }
        integer(UInt64(keyCRC.value), 4, into: &data)
        var result = Data(data + key + metadata)
        result.append(entry.body)
        let checksum = CRC32.checksum(result)
        for index in 0..<4 { result.append(UInt8(truncatingIfNeeded: checksum >> UInt32(8 * index))) }
        return result
    }
}
