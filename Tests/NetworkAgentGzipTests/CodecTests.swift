import Foundation
import NetworkAgentGzip
import NetworkAgentTestServer
import NetworkAgentTestSupport
import NetworkAgentToolSupport
import Testing

// Serialized so that the peak-memory checks (bomb, big round trip) are not disturbed by this suite's other tests.
@Suite("Gzip codec", .serialized)
struct CodecTests {
    static let sizes = [0, 1, 65_535, 65_536, 65_537, 1_000_000]
    static let formats: [Deflater.Format] = [.gzip, .zlib, .raw]

    // MARK: - Round trips

    @Test("one-shot round trip", arguments: sizes, formats)
    func oneShotRoundTrip(size: Int, format: Deflater.Format) throws {
        let data = Sample.json(count: size)
        let compressed = try Deflater.compress(data, format: format)
        #expect(try Inflater.decompress(compressed, format: format.inflateFormat) == data)
        #expect(try Inflater.decompress(compressed, format: .automatic) == data)
    }

    @Test("streaming round trip in uneven chunks", arguments: sizes, formats)
    func streamingRoundTrip(size: Int, format: Deflater.Format) throws {
        let data = Sample.json(count: size)
        var deflater = try Deflater(format: format, level: 6)
        var compressed = Data()
        for chunk in data.chunks(of: 65_536) {
            compressed += try deflater.compress(chunk)
        }
        compressed += try deflater.finish()
        #expect(try Inflater.decompress(compressed, format: format.inflateFormat) == data)

        var inflater = Inflater(format: .automatic)
        var restored = Data()
        for chunk in compressed.chunks(of: 7_919) {
            restored += try inflater.decompress(chunk)
        }
        restored += try inflater.finish()
        #expect(restored == data)
    }

    @Test("byte-by-byte feeding", arguments: formats)
    func byteByByte(format: Deflater.Format) throws {
        let data = Sample.json(count: 100_000)
        var deflater = try Deflater(format: format, level: 6)
        var compressed = Data()
        for index in data.indices {
            compressed += try deflater.compress(data[index...index])
        }
        compressed += try deflater.finish()
        #expect(try Inflater.decompress(compressed, format: format.inflateFormat) == data)

        var inflater = Inflater(format: .automatic)
        var restored = Data()
        for index in compressed.indices {
            restored += try inflater.decompress(compressed[index...index])
        }
        restored += try inflater.finish()
        #expect(restored == data)
    }

    @Test("every level round trips, and higher levels are not larger on text", arguments: 0...9)
    func levels(level: Int) throws {
        let data = Sample.json(count: 200_000)
        let compressed = try Deflater.compress(data, format: .gzip, level: level)
        #expect(try Inflater.decompress(compressed) == data)
        if level > 0 {
            #expect(compressed.count < data.count / 2)
        }
    }

    @Test("non-contiguous DataProtocol input (DispatchData-like regions)")
    func multiRegionInput() throws {
        let data = Sample.json(count: 300_000)
        let regions = MultiRegion(parts: Array(data.chunks(of: 10_007)))
        let compressed = try Deflater.compress(regions, format: .zlib)
        #expect(try Inflater.decompress(compressed) == data)
        let splitCompressed = MultiRegion(parts: Array(compressed.chunks(of: 333)))
        #expect(try Inflater.decompress(splitCompressed, format: .zlib) == data)
    }

    @Test("flush makes everything so far decodable without ending the stream")
    func flushIsDecodable() throws {
        let first = Sample.json(count: 50_000)
        let second = Sample.json(count: 50_000, seed: 7)
        var deflater = try Deflater(format: .gzip)
        var inflater = Inflater()
        let part = try deflater.compress(first) + deflater.flush()
        #expect(try inflater.decompress(part) == first)
        let rest = try deflater.compress(second) + deflater.finish()
        #expect(try inflater.decompress(rest) == second)
        #expect(try inflater.finish().isEmpty)
    }

    @Test("a deflater and an inflater can be reused after finish")
    func reuseAfterFinish() throws {
        let first = Sample.json(count: 20_000)
        let second = Sample.json(count: 30_000, seed: 9)
        var deflater = try Deflater(format: .gzip)
        let gzipped = try deflater.compress(first) + deflater.finish()
        let gzippedAgain = try deflater.compress(second) + deflater.finish()
        #expect(try Inflater.decompress(gzipped) == first)
        #expect(try Inflater.decompress(gzippedAgain) == second)

        // In automatic mode the format is detected anew for every stream.
        var inflater = Inflater()
        #expect(try inflater.decompress(gzipped) + inflater.finish() == first)
        let zlibbed = try Deflater.compress(second, format: .zlib)
        #expect(try inflater.decompress(zlibbed) + inflater.finish() == second)
        let raw = try Deflater.compress(first, format: .raw)
        #expect(try inflater.decompress(raw) + inflater.finish() == first)
    }

    @Test("an invalid level is rejected")
    func invalidLevel() {
        #expect(throws: GzipPlugin.Error.self) { _ = try Deflater(level: 10) }
        do {
            _ = try Deflater(level: -1)
            Issue.record("level -1 was accepted")
        } catch {
            #expect(error.code == .invalidArgument)
        }
    }

    // MARK: - gzip CLI interop

    @Test("gzip -c output decodes", .enabled(if: Shell.hasGzip, Shell.needsGzip))
    func decodesGzipCLI() async throws {
        let data = Sample.json(count: 1_000_000)
        let file = try TemporaryFile(data)
        let compressed = try await Shell.run(["gzip", "-c", "-6", file.path])
        #expect(Inflater.isCompressed(compressed) == .gzip)
        #expect(try Inflater.decompress(compressed, format: .gzip) == data)
        #expect(try Inflater.decompress(compressed) == data)
    }

    @Test("gzip -d decodes our output", .enabled(if: Shell.hasGzip, Shell.needsGzip), arguments: [1, 6, 9])
    func gzipCLIDecodesOurs(level: Int) async throws {
        let data = Sample.json(count: 1_000_000)
        let file = try TemporaryFile(Deflater.compress(data, format: .gzip, level: level))
        #expect(try await Shell.run(["gzip", "-d", "-c", file.path]) == data)
        _ = try await Shell.run(["gzip", "-t", file.path])
    }

    // MARK: - Detection

    @Test("automatic detection picks the right format", arguments: formats)
    func automaticDetection(format: Deflater.Format) throws {
        let data = Sample.json(count: 10_000)
        let compressed = try Deflater.compress(data, format: format)
        // Detection must survive the header being split across chunks.
        var inflater = Inflater()
        var restored = try inflater.decompress(compressed.prefix(1))
        restored += try inflater.decompress(Data())
        restored += try inflater.decompress(compressed.dropFirst())
        restored += try inflater.finish()
        #expect(restored == data)
    }

    @Test("isCompressed recognizes gzip and zlib but not text or raw deflate")
    func isCompressedDetection() throws {
        let json = Sample.json(count: 5_000)
        #expect(Inflater.isCompressed(try Deflater.compress(json, format: .gzip)) == .gzip)
        #expect(Inflater.isCompressed(try Deflater.compress(json, format: .zlib)) == .zlib)
        #expect(Inflater.isCompressed(try Deflater.compress(Data(), format: .gzip)) == .gzip)
        #expect(Inflater.isCompressed(try Deflater.compress(Data(), format: .zlib)) == .zlib)
        for level in [1, 9] {
            #expect(Inflater.isCompressed(try Deflater.compress(json, format: .zlib, level: level)) == .zlib)
        }
        #expect(Inflater.isCompressed(try Deflater.compress(json, format: .raw)) == nil)
        #expect(Inflater.isCompressed(json) == nil)
        #expect(Inflater.isCompressed(Data()) == nil)
        #expect(Inflater.isCompressed(Data([0x1f])) == nil)
        // Texts whose first two bytes happen to form a valid zlib header.
        for text in ["80", "80, 90, 100, 110, 120", "x^ is a caret", "Hj, hello there", "8O: not zlib at all"] {
            #expect(Inflater.isCompressed(Data(text.utf8)) == nil, "\(text)")
        }
        // gzip magic with an unknown method or reserved flags set is not gzip.
        #expect(Inflater.isCompressed(Data([0x1f, 0x8b, 0x07, 0x00])) == nil)
        #expect(Inflater.isCompressed(Data([0x1f, 0x8b, 0x08, 0x80])) == nil)
    }

    // MARK: - Concatenated members

    /// Four parts (one of them empty) and the stream of their gzip members, one per part, at alternating levels.
    static func concatenatedParts() throws -> (parts: [Data], stream: Data) {
        let parts = [Sample.json(count: 70_000), Data(), Sample.json(count: 1_234, seed: 3), Data("tail".utf8)]
        var stream = Data()
        for (index, part) in parts.enumerated() {
            stream += try Deflater.compress(part, format: .gzip, level: index % 2 == 0 ? 6 : 1)
        }
        return (parts, stream)
    }

    @Test("concatenated gzip members decode to the concatenation")
    func concatenatedMembers() throws {
        let (parts, stream) = try Self.concatenatedParts()
        try Self.expectConcatenation(stream, decodesTo: parts.reduce(Data(), +))
    }

    @Test("a member written by the gzip CLI decodes after ours", .enabled(if: Shell.hasGzip, Shell.needsGzip))
    func concatenatedMembersWithGzipCLI() async throws {
        let (parts, ours) = try Self.concatenatedParts()
        let file = try TemporaryFile(Data("from the CLI\n".utf8))
        let stream = try await ours + Shell.run(["gzip", "-c", file.path])
        try Self.expectConcatenation(stream, decodesTo: parts.reduce(Data(), +) + Data("from the CLI\n".utf8))
    }

    /// Expects `stream` to decode to `expected` whole and fed in chunks of several sizes.
    static func expectConcatenation(_ stream: Data, decodesTo expected: Data) throws {
        #expect(try Inflater.decompress(stream) == expected)
        #expect(try Inflater.decompress(stream, format: .gzip) == expected)
        for chunkSize in [1, 2, 9, 4_096] {
            var inflater = Inflater(format: .gzip)
            var restored = Data()
            for chunk in stream.chunks(of: chunkSize) {
                restored += try inflater.decompress(chunk)
            }
            restored += try inflater.finish()
            #expect(restored == expected, "chunk size \(chunkSize)")
        }
    }

    @Test("members split at every byte position")
    func membersSplitEverywhere() throws {
        let first = Data("first member ".utf8)
        let second = Data("second member".utf8)
        let stream = try Deflater.compress(first) + Deflater.compress(second)
        for split in 0...stream.count {
            var inflater = Inflater()
            var restored = try inflater.decompress(stream.prefix(split))
            restored += try inflater.decompress(stream.dropFirst(split))
            restored += try inflater.finish()
            #expect(restored == first + second, "split at \(split)")
        }
    }

    // MARK: - Corrupt and truncated input

    @Test("a corrupt gzip header is rejected")
    func corruptHeader() throws {
        let good = try Deflater.compress(Sample.json(count: 1_000), format: .gzip)
        for (offset, value) in [(0, UInt8(0x1e)), (1, 0x8c), (2, 0x07), (3, 0xe0)] {
            var bad = good
            bad[offset] = value
            #expect(throws: GzipPlugin.Error.self, "offset \(offset)") {
                try Inflater.decompress(bad, format: .gzip)
            }
            do {
                _ = try Inflater.decompress(bad, format: .gzip)
            } catch {
                #expect(error.code == .corruptData, "offset \(offset): \(error)")
            }
        }
        var badZlib = try Deflater.compress(Sample.json(count: 1_000), format: .zlib)
        badZlib[1] ^= 0x01
        #expect(throws: GzipPlugin.Error.self) { try Inflater.decompress(badZlib, format: .zlib) }
    }

    @Test("corruption in the middle is detected")
    func corruptMiddle() throws {
        let data = Sample.json(count: 1_000_000)
        for format in Self.formats where format != .raw {
            let good = try Deflater.compress(data, format: format)
            for position in [good.count / 3, good.count / 2, good.count * 3 / 4] {
                var bad = good
                bad[position] ^= 0x5a
                do {
                    let restored = try Inflater.decompress(bad, format: format.inflateFormat)
                    Issue.record("\(format) with byte \(position) flipped decoded to \(restored.count) bytes")
                } catch {
                    let expected: [GzipPlugin.Error.Code] = [.corruptData, .checksumMismatch, .truncatedInput]
                    #expect(expected.contains(error.code), "\(error)")
                }
            }
        }
    }

    @Test("truncated input makes finish throw truncatedInput", arguments: formats)
    func truncated(format: Deflater.Format) throws {
        let data = Sample.json(count: 200_000)
        let good = try Deflater.compress(data, format: format)
        for cut in [0, 1, 2, 5, 10, good.count / 2, good.count - 8, good.count - 4, good.count - 1] {
            let prefix = good.prefix(cut)
            var inflater = Inflater(format: format.inflateFormat)
            let partial = try inflater.decompress(prefix)
            #expect(data.starts(with: partial))
            do {
                _ = try inflater.finish()
                Issue.record("finish accepted \(cut) of \(good.count) bytes")
            } catch {
                #expect(error.code == .truncatedInput, "\(error)")
            }
            do {
                _ = try Inflater.decompress(prefix, format: format.inflateFormat)
                Issue.record("one-shot accepted \(cut) of \(good.count) bytes")
            } catch {
                #expect(error.code == .truncatedInput, "\(error)")
            }
        }
    }

    @Test("a flipped CRC-32 or ISIZE byte is a checksum mismatch")
    func badTrailer() throws {
        let data = Sample.json(count: 100_000)
        let good = try Deflater.compress(data, format: .gzip)
        for (offset, wording) in [(8, "data check"), (5, "data check"), (4, "length check"), (1, "length check")] {
            var bad = good
            bad[bad.count - offset] ^= 0x01
            do {
                _ = try Inflater.decompress(bad, format: .gzip)
                Issue.record("trailer byte -\(offset) flipped was accepted")
            } catch {
                #expect(error.code == .checksumMismatch)
                #expect(error.message.contains(wording), "\(error)")
            }
        }
        var badAdler = try Deflater.compress(data, format: .zlib)
        badAdler[badAdler.count - 1] ^= 0x01
        do {
            _ = try Inflater.decompress(badAdler)
            Issue.record("a flipped Adler-32 byte was accepted")
        } catch {
            #expect(error.code == .checksumMismatch)
        }
    }

    @Test("data after the end of a stream is rejected")
    func trailingGarbage() throws {
        let data = Sample.json(count: 1_000)
        for format in Self.formats {
            let stream = try Deflater.compress(data, format: format) + Data([0, 0, 0, 0])
            do {
                _ = try Inflater.decompress(stream, format: format.inflateFormat)
                Issue.record("\(format) with trailing zeros was accepted")
            } catch {
                #expect(error.code == .corruptData, "\(error)")
            }
        }
    }

    @Test("errors are sticky until reset")
    func stickyErrors() throws {
        var inflater = Inflater(format: .gzip)
        #expect(throws: GzipPlugin.Error.self) { try inflater.decompress(Data("not gzip at all".utf8)) }
        #expect(throws: GzipPlugin.Error.self) { try inflater.decompress(Data()) }
        #expect(throws: GzipPlugin.Error.self) { try inflater.finish() }
        inflater.reset()
        let data = Sample.json(count: 5_000)
        #expect(try inflater.decompress(Deflater.compress(data)) + inflater.finish() == data)
    }

    @Test("finish without any input throws truncatedInput")
    func emptyInput() {
        for format: InflateFormat in [.automatic, .gzip, .zlib, .raw] {
            var inflater = Inflater(format: format)
            do {
                _ = try inflater.finish()
                Issue.record("\(format): empty input accepted")
            } catch {
                #expect(error.code == .truncatedInput)
            }
        }
    }

    // MARK: - Limits

    @Test("the output limit is exact")
    func exactOutputLimit() throws {
        let data = Sample.json(count: 100_000)
        let compressed = try Deflater.compress(data)
        let exact = Inflater.Limits(maximumOutputBytes: data.count, maximumRatio: .infinity)
        #expect(try Inflater.decompress(compressed, limits: exact) == data)
        let tooSmall = Inflater.Limits(maximumOutputBytes: data.count - 1, maximumRatio: .infinity)
        do {
            _ = try Inflater.decompress(compressed, limits: tooSmall)
            Issue.record("output one byte over the limit was accepted")
        } catch {
            #expect(error.code == .outputLimitExceeded)
        }
    }

    @Test(
        "a 1 GiB zero bomb stops at a 10 MB limit with bounded memory",
        .enabled(if: Memory.isAvailable, Memory.runsAlone),
        .enabled(if: Memory.canResetPeak, Memory.needsPeakReset),
        .timeLimit(.minutes(2))
    )
    func bombMemoryBound() throws {
        let bomb = try Sample.zeroBomb(megabytes: 1_024)
        #expect(bomb.count < 2_000_000)
        let limits = Inflater.Limits(maximumOutputBytes: 10_000_000, maximumRatio: .infinity)

        // Without the reset, an earlier peak of this process (building the bomb) would hide any growth.
        try #require(Memory.resetPeak(), Memory.needsPeakReset)
        let before = try #require(Memory.kilobytes("VmHWM"))

        do {
            _ = try Inflater.decompress(bomb, limits: limits)
            Issue.record("the bomb decompressed")
        } catch {
            #expect(error.code == .outputLimitExceeded, "\(error)")
        }

        var inflater = Inflater(limits: limits)
        var fed = 0
        var produced = 0
        do {
            for chunk in bomb.chunks(of: 65_536) {
                fed += chunk.count
                produced += try inflater.decompress(chunk).count
            }
            Issue.record("the streamed bomb decompressed")
        } catch {
            #expect(error.code == .outputLimitExceeded, "\(error)")
        }
        // 64 KiB of this bomb expands to ~64 MB, so the first chunk must trip the 10 MB limit.
        #expect(fed <= 65_536)
        #expect(produced <= 10_000_000)

        let after = try #require(Memory.kilobytes("VmHWM"))
        let grownMiB = (after - before) / 1024
        // Without the guard this would be ~1 GiB; with it, one 10 MB buffer plus zlib's state.
        #expect(grownMiB < 48, "peak memory grew by \(grownMiB) MiB")
    }

    @Test("the ratio limit trips on large outputs but not below its threshold")
    func ratioLimit() throws {
        let zeros = try Sample.zeroBomb(megabytes: 8)
        let strict = Inflater.Limits(maximumOutputBytes: .max, maximumRatio: 100)
        do {
            _ = try Inflater.decompress(zeros, limits: strict)
            Issue.record("a 1000:1 stream passed a 100:1 limit")
        } catch {
            #expect(error.code == .ratioLimitExceeded, "\(error)")
        }
        // Streaming: stops within the first chunks rather than after inflating everything.
        var inflater = Inflater(limits: strict)
        var produced = 0
        do {
            for chunk in zeros.chunks(of: 1_024) {
                produced += try inflater.decompress(chunk).count
            }
            Issue.record("the streamed stream passed a 100:1 limit")
        } catch {
            #expect(error.code == .ratioLimitExceeded)
        }
        #expect(produced < 4 * 1024 * 1024)

        // 512 KiB of zeros is also ~1000:1 but stays under the 1 MiB threshold.
        let small = try Deflater.compress(Data(count: 512 * 1024))
        #expect(try Inflater.decompress(small, limits: strict).count == 512 * 1024)
        // Ordinary JSON is far below the default ratio.
        let json = Sample.json(count: 3_000_000)
        #expect(try Inflater.decompress(Deflater.compress(json)) == json)
    }

    // MARK: - Big (~100 MB)

    @Test(
        "BIG: ~100 MB streamed through deflate and inflate with constant memory",
        .enabled(if: Memory.isAvailable, Memory.runsAlone),
        .enabled(if: Memory.canResetPeak, Memory.needsPeakReset),
        .timeLimit(.minutes(5))
    )
    func bigStreamingRoundTripMemoryBound() throws {
        // 100 repetitions of a 1 MiB block: the repeats are further apart than deflate's 32 KiB window, so each
        // block compresses like fresh data, while the expected output is cheap to check without holding it.
        let block = Sample.json(count: 1 << 20, seed: 2024)
        let repetitions = 100
        // Without the reset, an earlier peak of this process would hide any growth.
        try #require(Memory.resetPeak(), Memory.needsPeakReset)
        let before = try #require(Memory.kilobytes("VmHWM"))

        var deflater = try Deflater(format: .gzip, level: 6)
        var inflater = Inflater(format: .automatic)
        var checked = 0
        var compressedBytes = 0
        func verify(_ output: Data) {
            var offset = 0
            while offset < output.count {
                let position = (checked + offset) % block.count
                let length = min(block.count - position, output.count - offset)
                let expected = block[position..<(position + length)]
                let actual = output[(output.startIndex + offset)..<(output.startIndex + offset + length)]
                if actual != expected {
                    Issue.record("mismatch in block at stream offset \(checked + offset)")
                    return
                }
                offset += length
            }
            checked += output.count
        }
        for _ in 0..<repetitions {
            for chunk in block.chunks(of: 256 * 1024) {
                let compressed = try deflater.compress(chunk)
                compressedBytes += compressed.count
                verify(try inflater.decompress(compressed))
            }
        }
        let tail = try deflater.finish()
        compressedBytes += tail.count
        verify(try inflater.decompress(tail))
        verify(try inflater.finish())
        #expect(checked == block.count * repetitions)
        #expect(compressedBytes < checked / 2)

        let after = try #require(Memory.kilobytes("VmHWM"))
        let grownMiB = (after - before) / 1024
        #expect(grownMiB < 48, "peak memory grew by \(grownMiB) MiB while streaming \(checked) bytes")
    }
}

// MARK: - Helpers

extension Deflater.Format {
    var inflateFormat: InflateFormat {
        switch self {
        case .gzip: .gzip
        case .zlib: .zlib
        case .raw: .raw
        }
    }
}

extension Data {
    /// Consecutive slices of at most `size` bytes.
    func chunks(of size: Int) -> [Data] {
        stride(from: startIndex, to: endIndex, by: size).map { self[$0..<Swift.min($0 + size, endIndex)] }
    }
}

/// A `DataProtocol` value made of several separate buffers, like `DispatchData`.
struct MultiRegion: DataProtocol {
    let parts: [Data]
    var regions: [Data] { parts }
    var startIndex: Int { 0 }
    var endIndex: Int { parts.reduce(0) { $0 + $1.count } }
    subscript(position: Int) -> UInt8 {
        var offset = position
        for part in parts {
            if offset < part.count {
                return part[part.startIndex + offset]
            }
            offset -= part.count
        }
        preconditionFailure("index out of range")
    }
}

enum Sample {
    /// Deterministic JSON-like text that compresses roughly like real API responses.
    static func json(count: Int, seed: UInt64 = 42) -> Data {
        let words = [
            "alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet", "kilo",
            "lima", "mike", "november", "oscar", "papa", "quebec", "romeo", "sierra", "tango", "uniform",
        ]
        var random = SplitMix64(seed: seed)
        func next() -> Int { Int(truncatingIfNeeded: random.next() >> 1) }
        var out = Data()
        out.reserveCapacity(count + 256)
        while out.count < count {
            let record =
                "{\"id\":\(next() % 10_000_000),\"name\":\"\(words[next() % words.count]) "
                + "\(words[next() % words.count])\",\"score\":\(next() % 100_000),\"active\":\(next() % 2 == 0),"
                + "\"tags\":[\"\(words[next() % words.count])\",\"\(words[next() % words.count])\"],"
                + "\"hash\":\"\(String(next(), radix: 36))\"},\n"
            out.append(contentsOf: record.utf8)
        }
        return out.prefix(count)
    }

    /// A gzip stream of `megabytes` MiB of zeros, built 1 MiB at a time so the plain data is never held.
    static func zeroBomb(megabytes: Int) throws -> Data {
        var deflater = try Deflater(format: .gzip, level: 9)
        let zeros = Data(count: 1 << 20)
        var out = Data()
        for _ in 0..<megabytes {
            out += try deflater.compress(zeros)
        }
        out += try deflater.finish()
        return out
    }
}

enum Shell {
    static let hasGzip = ["/usr/bin/gzip", "/bin/gzip"].contains { FileManager.default.isExecutableFile(atPath: $0) }

    /// Why a gzip CLI test is skipped.
    static let needsGzip: Comment = "needs the gzip executable (Scripts/install-deps installs it)"

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// Runs a command found on PATH and returns its standard output; throws on a non-zero exit.
    static func run(_ arguments: [String]) async throws -> Data {
        let result = try await ChildProcess.run(arguments[0], Array(arguments.dropFirst()))
        guard result.status == 0 else {
            throw Failure(description: "\(arguments.joined(separator: " ")) exited with \(result.status)")
        }
        return result.outputData
    }
}

/// A file in the temporary directory, removed when the value goes away.
final class TemporaryFile {
    let path: String

    init(_ contents: Data) throws {
        path =
            FileManager.default.temporaryDirectory
            .appendingPathComponent("gzip-codec-\(UUID().uuidString)").path
        try contents.write(to: URL(fileURLWithPath: path))
    }

    deinit {
        try? FileManager.default.removeItem(atPath: path)
    }
}
