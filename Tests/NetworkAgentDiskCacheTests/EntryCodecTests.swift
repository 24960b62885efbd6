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
}
