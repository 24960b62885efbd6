// libFuzzer entry point for NetworkAgentGzip's Inflater (and, through round trips, its Deflater).
//
// Not part of the package: Scripts/fuzz compiles the core and Plugins/NetworkAgentGzip with
// `swiftc -sanitize=fuzzer,address -enable-testing` into static libraries and links this file against them, so
// internal API is visible through @testable import.
// Besides "no crash, no memory error", every input is checked against properties that must always hold:
//
// 1. no format and no limit ever yields more output than the limit allows;
// 2. inflating in uneven chunks gives the same output, or the same error, as inflating in one call;
// 3. compressing the input and inflating the result gives the input back, in every format.
//
// A failed property stops the run with fatalError, which libFuzzer reports as a crash with the input saved.
import Foundation

@testable import NetworkAgentGzip

/// Output limits small enough that every run stays fast under AddressSanitizer.
let fuzzLimits = Inflater.Limits(maximumOutputBytes: 1 << 20, maximumRatio: 1000, ratioCheckThreshold: 64 << 10)

/// Runs one input; libFuzzer calls it by its C name. Always returns 0 (the input is usable).
@_cdecl("LLVMFuzzerTestOneInput")
public func inflaterFuzzTestOneInput(_ bytes: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let bytes, size > 0 else {
        checkInflate(Data())
        return 0
    }
    let data = Data(bytes: bytes, count: size)
    checkInflate(data)
    checkRoundTrip(data)
    _ = Inflater.isCompressed(data)
    return 0
}

/// The outcome of one inflation, comparable across one-shot and streaming runs.
enum Outcome: Equatable {
    case output(Data)
    case failure(GzipPlugin.Error.Code)

    var isLimitFailure: Bool {
        self == .failure(.outputLimitExceeded) || self == .failure(.ratioLimitExceeded)
    }
}

func oneShot(_ data: Data, format: InflateFormat) -> Outcome {
    do {
        return .output(try Inflater.decompress(data, format: format, limits: fuzzLimits))
    } catch {
        return .failure(error.code)
    }
}

/// Feeds `data` in chunks of 1 to 97 bytes, sizes taken from a generator seeded by the input length.
func streamed(_ data: Data, format: InflateFormat) -> Outcome {
    var inflater = Inflater(format: format, limits: fuzzLimits)
    var output = Data()
    var state = UInt64(data.count) &* 0x9E37_79B9_7F4A_7C15 | 1
    var offset = data.startIndex
    do {
        while offset < data.endIndex {
            state ^= state << 13
            state ^= state >> 7
            state ^= state << 17
            let end = min(offset + 1 + Int(state % 97), data.endIndex)
            output += try inflater.decompress(data[offset..<end])
            offset = end
        }
        output += try inflater.finish()
        return .output(output)
    } catch {
        return .failure(error.code)
    }
}

func checkInflate(_ data: Data) {
    for format in [InflateFormat.automatic, .gzip, .zlib, .raw] {
        let whole = oneShot(data, format: format)
        if case .output(let output) = whole, output.count > fuzzLimits.maximumOutputBytes {
            fatalError("\(format): \(output.count) bytes of output passed the limit")
        }
        let pieces = streamed(data, format: format)
        if case .output(let output) = pieces, output.count > fuzzLimits.maximumOutputBytes {
            fatalError("\(format): \(output.count) bytes of streamed output passed the limit")
        }
        // Where a limit trips depends on how much input zlib had consumed at the time, which chunking changes.
        if whole.isLimitFailure || pieces.isLimitFailure {
            continue
        }
        if whole != pieces {
            fatalError("\(format): one call gave \(describe(whole)), chunks gave \(describe(pieces))")
        }
    }
}

func checkRoundTrip(_ data: Data) {
    let level = Int(data[data.startIndex] % 10)
    for format in [Deflater.Format.gzip, .zlib, .raw] {
        let inflateFormat: InflateFormat =
            switch format {
            case .gzip: .gzip
            case .zlib: .zlib
            case .raw: .raw
            }
        do {
            let compressed = try Deflater.compress(data, format: format, level: level)
            let restored = try Inflater.decompress(compressed, format: inflateFormat, limits: .unlimited)
            if restored != data {
                fatalError("\(format) level \(level): the round trip changed \(data.count) bytes")
            }
        } catch {
            fatalError("\(format) level \(level): the round trip failed with \(error)")
        }
    }
}

func describe(_ outcome: Outcome) -> String {
    switch outcome {
    case .output(let data): "\(data.count) bytes"
    case .failure(let code): "\(code)"
    }
}
