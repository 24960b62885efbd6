import Foundation
import Testing

@testable import NetworkAgentDiskCache

/// Reading a request's `Range` field (RFC 9110 §14.1, §14.2) and resolving it against a stored body: the pure rules
/// behind answering ranges from the store. Over the wire: ``RangeServingTests``.
@Suite struct ByteRangeTests: PolicyFixture {
    @Test(arguments: [
        ("bytes=0-1", ByteRange.from(0, through: 1)), ("bytes=5-", .from(5, through: nil)), ("bytes=-3", .suffix(3)),
        ("BYTES=2-3", .from(2, through: 3)), ("bytes= 2-3 ", .from(2, through: 3)), ("bytes=4-4", .from(4, through: 4)),
        ("bytes=0-99999999999999999999999", .from(0, through: Int.max)),
        ("bytes=99999999999999999999-", .from(Int.max, through: nil)),
        ("bytes=-99999999999999999999", .suffix(Int.max)),
    ])
    func aSingleByteRangeIsRead(_ field: String, _ range: ByteRange) {
        #expect(ByteRange(rangeField: field) == range)
    }

    /// Anything but one well-formed byte range is left to the origin.
    @Test(arguments: [
        "bytes=0-1,4-5", "bytes=0-1, -2", "items=0-1", "bytes=3-2", "bytes=", "bytes=-", "bytes=a-b", "bytes=1-2-3",
        "bytes 0-1", "bytes=+1-2", "bytes=0x1-2", "", "bytes=,0-1", "bytes=1 -2", "=0-1",
    ])
    func anythingElseIsNotServed(_ field: String) {
        #expect(ByteRange(rangeField: field) == nil)
    }

    @Test(arguments: [
        (ByteRange.from(2, through: 4), 10, ByteRange.Resolution.bytes(2...4)),
        (.from(7, through: nil), 10, .bytes(7...9)), (.suffix(3), 10, .bytes(7...9)), (.suffix(20), 10, .bytes(0...9)),
        (.from(5, through: 100), 10, .bytes(5...9)), (.from(0, through: Int.max), 10, .bytes(0...9)),
        (.from(9, through: 9), 10, .bytes(9...9)), (.from(10, through: nil), 10, .unsatisfiable),
        (.from(12, through: 20), 10, .unsatisfiable), (.suffix(0), 10, .unsatisfiable),
        (.from(0, through: nil), 0, .unsatisfiable), (.suffix(1), 0, .whole),
    ])
    func aRangeIsResolvedAgainstTheStoredLength(_ range: ByteRange, _ length: Int, _ resolution: ByteRange.Resolution) {
        #expect(range.resolved(length: length) == resolution)
    }

    /// Only a stored 200 whose body is the representation the origin sent can be sliced: not a body the transport
    /// decoded from a content coding, nor one whose `Content-Length` says otherwise.
    @Test func onlyACompleteUnencodedBodyIsSliced() {
        func stored(status: Int = 200, _ headers: [String: String], body: String = "0123456789") -> CachedEntry {
            var stored = entry(status: status, headers)
            stored.body = Data(body.utf8)
            return stored
        }
        #expect(stored([:]).holdsCompleteRepresentation)
        #expect(stored(["Content-Length": "10"]).holdsCompleteRepresentation)
        #expect(stored(["Content-Encoding": "identity"]).holdsCompleteRepresentation)
        #expect(!stored(["Content-Length": "30"]).holdsCompleteRepresentation)
        #expect(!stored(["Content-Encoding": "gzip"]).holdsCompleteRepresentation)
        #expect(!stored(["Content-Range": "bytes 0-9/20"]).holdsCompleteRepresentation)
        #expect(!stored(status: 203, [:]).holdsCompleteRepresentation)
    }
}
