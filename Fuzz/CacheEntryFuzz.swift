// libFuzzer entry point for the disk cache's entry codec (Plugins/NetworkAgentDiskCache/EntryCodec.swift).
//
// Not part of the package: Scripts/fuzz compiles this file against the core and the disk cache plugin, both built
// with the same sanitizer flags and -enable-testing (the codec is internal). Each input is decoded twice: as it is,
// and "repaired" — magic and version set, the three lengths reduced to fit the input, both CRC-32s recomputed — so
// that mutations reach the key and metadata decoders instead of stopping at the checksum. Properties:
//
// 1. decoding any bytes returns an entry or throws EntryCodec.Failure (typed throws), without crashing and without
//    allocating more than the input's size warrants (Scripts/fuzz runs this target with -malloc_limit_mb);
// 2. every entry that decodes re-encodes to bytes that decode to an equal entry, and encoding that entry again
//    gives the same bytes;
// 3. flipping any single byte of a valid encoding makes decoding fail (every byte for small entries, the prefix,
//    the checksum and a spread of positions for larger ones);
// 4. what a store reads alone to rebuild its index (the prefix, then the key) agrees with the whole-entry decoder on
//    the entry's length and key.
//
// A failed property stops the run with fatalError, which libFuzzer reports as a crash with the input saved.
import Foundation

@testable import NetworkAgentDiskCache

/// Runs one input; libFuzzer calls it by its C name. Always returns 0 (the input is usable).
@_cdecl("LLVMFuzzerTestOneInput")
public func cacheEntryFuzzTestOneInput(_ bytes: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let data = bytes.map { Data(bytes: $0, count: size) } ?? Data()
    check(data)
    if let repaired = repaired(data) {
        check(repaired)
    }
    return 0
}

func check(_ data: Data) {
    // What a store reads alone when it rebuilds its index: the prefix, then the key.
    let indexedKey = indexKey(data)
    let entry: CachedEntry
    do {
        entry = try EntryCodec.decode(data)
    } catch {
        // Typed throws: the only possible error is EntryCodec.Failure.
        return
    }
    guard let indexedKey, indexedKey.length == data.count, indexedKey.key == entry.key else {
        fail(data, "the index path read \(String(describing: indexedKey)) for an entry filed under \(entry.key)")
    }

    let encoded = EntryCodec.encode(entry)
    let again: CachedEntry
    do {
        again = try EntryCodec.decode(encoded)
    } catch {
        fail(data, "the re-encoded entry does not decode: \(error)")
    }
    guard again == entry else {
        fail(data, "the entry changed in a round trip:\n    \(entry)\n    \(again)")
    }
    guard EntryCodec.encode(again) == encoded else {
        fail(data, "encoding the round-tripped entry gave other bytes")
    }
    checkFlips(encoded, mask: data.last.map { $0 == 0 ? 0x01 : $0 } ?? 0x01)
}

/// The key and file length the index rebuild takes from an entry file, or `nil` where it would skip the file.
func indexKey(_ data: Data) -> (key: CacheKey, length: Int)? {
    guard let prefix = try? EntryCodec.decodePrefix(data.prefix(EntryCodec.prefixLength)) else { return nil }
    let keyStart = data.startIndex + EntryCodec.prefixLength
    guard data.count >= EntryCodec.prefixLength + prefix.keyLength else { return nil }
    let key = try? EntryCodec.decodeKey(
        prefixBytes: data.prefix(EntryCodec.prefixLength),
        prefix: prefix,
        keyBytes: data[keyStart..<keyStart + prefix.keyLength]
    )
    return key.map { ($0, prefix.totalLength) }
}

/// Flips bytes of a valid encoding one at a time; every damaged copy must fail to decode.
func checkFlips(_ encoded: Data, mask: UInt8) {
    let count = encoded.count
    var positions: [Int]
    if count <= 512 {
        positions = Array(0..<count)
    } else {
        let prefixEnd = EntryCodec.prefixLength
        positions = Array(0..<prefixEnd) + Array(count - EntryCodec.trailerLength..<count)
        let step = max(1, (count - prefixEnd) / 64)
        positions += stride(from: prefixEnd, to: count - EntryCodec.trailerLength, by: step).map {
            $0 + Int(mask) % step
        }
    }
    for position in positions where position < count {
        var damaged = encoded
        damaged[damaged.startIndex + position] ^= mask
        if let entry = try? EntryCodec.decode(damaged) {
            fail(encoded, "flipping byte \(position) with \(mask) still decoded, to \(entry)")
        }
    }
}

/// The input made structurally valid: magic, version, lengths that add up to its size, correct checksums.
/// `nil` when it is too short to hold a prefix and a checksum.
func repaired(_ data: Data) -> Data? {
    let minimum = EntryCodec.prefixLength + EntryCodec.trailerLength
    guard data.count >= minimum else { return nil }
    var bytes = [UInt8](data)
    bytes.replaceSubrange(0..<4, with: EntryCodec.magic)
    bytes[4] = EntryCodec.version
    let available = UInt64(bytes.count - minimum)
    let keyLength = read(bytes, at: 8, count: 4) % (available + 1)
    let metadataLength = read(bytes, at: 12, count: 4) % (available - keyLength + 1)
    let bodyLength = available - keyLength - metadataLength
    write(keyLength, into: &bytes, at: 8, count: 4)
    write(metadataLength, into: &bytes, at: 12, count: 4)
    write(bodyLength, into: &bytes, at: 16, count: 8)
    var keyCRC = CRC32()
    bytes.withUnsafeBytes { keyCRC.update(UnsafeRawBufferPointer(rebasing: $0[0..<24])) }
    let keyEnd = EntryCodec.prefixLength + Int(keyLength)
    bytes.withUnsafeBytes { keyCRC.update(UnsafeRawBufferPointer(rebasing: $0[EntryCodec.prefixLength..<keyEnd])) }
    write(UInt64(keyCRC.value), into: &bytes, at: 24, count: 4)
    var crc = CRC32()
    let checked = bytes.count - EntryCodec.trailerLength
    bytes.withUnsafeBytes { crc.update(UnsafeRawBufferPointer(rebasing: $0[0..<checked])) }
    write(UInt64(crc.value), into: &bytes, at: checked, count: 4)
    return Data(bytes)
}

func read(_ bytes: [UInt8], at offset: Int, count: Int) -> UInt64 {
    (0..<count).reduce(0) { $0 | UInt64(bytes[offset + $1]) << UInt64(8 * $1) }
}

func write(_ value: UInt64, into bytes: inout [UInt8], at offset: Int, count: Int) {
    for index in 0..<count { bytes[offset + index] = UInt8(truncatingIfNeeded: value >> UInt64(8 * index)) }
}

func fail(_ data: Data, _ message: String) -> Never {
    fatalError("\(message)\n  entry bytes (\(data.count)): \(data.prefix(256).map { String($0, radix: 16) })")
}
