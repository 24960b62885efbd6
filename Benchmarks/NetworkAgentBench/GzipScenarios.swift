import Foundation
import NetworkAgentGzip

/// `gzip_inflate` and `gzip_deflate`: the codec's throughput on JSON against Python's `zlib` (the same C library
/// behind an interpreter that adds almost nothing per call) on the same bytes. MB/s count uncompressed MiB.
@MainActor
enum GzipScenarios {
    /// The compression level measured, gzip's default.
    static let level = 6

    /// The size of the JSON sample: 100 MiB, 16 MiB in quick mode.
    static func sampleSize(quick: Bool) -> Int {
        quick ? 16 << 20 : 100 << 20
    }

    static func inflate(_ context: BenchContext) async throws -> Measurement {
        let sample = try context.gzipSample()
        let megabytes = Double(sample.raw.count) / 1_048_576
        let limits = Inflater.Limits(
            maximumOutputBytes: max(Inflater.Limits.default.maximumOutputBytes, sample.raw.count)
        )
        var measurement = try await compare(
            context,
            subject: {
                var output = Data()
                let elapsed = try ContinuousClock().measure {
                    output = try Inflater.decompress(sample.gzip, format: .gzip, limits: limits)
                }
                guard output == sample.raw else { throw BenchFailure("the Inflater's output differs from the input") }
                return megabytes / elapsed.seconds
            },
            baseline: {
                let timing = try await PythonZlib.time(.decompressGzip, file: sample.gzipFile)
                guard timing.outputBytes == sample.raw.count else {
                    throw BenchFailure("Python inflated \(timing.outputBytes) bytes, not \(sample.raw.count)")
                }
                return megabytes / timing.seconds
            }
        )
        measurement.note = [sample.description, measurement.note].compactMap { $0 }.joined(separator: "; ")
        return measurement
    }

    static func deflate(_ context: BenchContext) async throws -> Measurement {
        let sample = try context.gzipSample()
        let megabytes = Double(sample.raw.count) / 1_048_576
        var swiftSize = 0
        var pythonSize = 0
        var verified = false
        var measurement = try await compare(
            context,
            subject: {
                var output = Data()
                let elapsed = try ContinuousClock().measure {
                    output = try Deflater.compress(sample.raw, format: .gzip, level: level)
                }
                if !verified {
                    let limits = Inflater.Limits(maximumOutputBytes: sample.raw.count)
                    guard try Inflater.decompress(output, format: .gzip, limits: limits) == sample.raw else {
                        throw BenchFailure("the Deflater's output does not inflate back to the input")
                    }
                    verified = true
                }
                swiftSize = output.count
                return megabytes / elapsed.seconds
            },
            baseline: {
                let timing = try await PythonZlib.time(.compressGzip(level: level), file: sample.rawFile)
                pythonSize = timing.outputBytes
                return megabytes / timing.seconds
            }
        )
        let sizes =
            "level \(level) output \(mebibytes(swiftSize))"
            + (pythonSize > 0 ? " (Python \(mebibytes(pythonSize)))" : "")
        measurement.note = [String(format: "%.0f MiB of JSON", megabytes), sizes, measurement.note]
            .compactMap { $0 }.joined(separator: "; ")
        return measurement
    }

    /// Interleaves the Swift codec with Python's zlib, or measures the codec alone when there is no Python.
    private static func compare(
        _ context: BenchContext,
        subject: @MainActor () async throws -> Double,
        baseline: @MainActor () async throws -> Double
    ) async throws -> Measurement {
        guard let python = await context.pythonVersion() else {
            var values: [Double] = []
            for _ in 0..<context.options.repetitions {
                values.append(try await subject())
            }
            var measurement = Measurement(value: values.median, note: "no baseline: python3 with zlib not found")
            measurement.values = values
            return measurement
        }
        var measurement = try await Repetitions.interleaved(
            context.options.repetitions,
            baseline: baseline,
            subject: subject
        )
        measurement.note = "baseline: \(python)"
        return measurement
    }

    private static func mebibytes(_ bytes: Int) -> String {
        String(format: "%.1f MiB", Double(bytes) / 1_048_576)
    }
}

/// The JSON sample of the codec scenarios, in memory and on disk (for Python), raw and gzipped at level 6.
struct GzipSample: Sendable, CustomStringConvertible {
    let raw: Data
    let gzip: Data
    let rawFile: URL
    let gzipFile: URL

    var description: String {
        String(
            format: "%.0f MiB of JSON, %.1f MiB gzipped",
            Double(raw.count) / 1_048_576,
            Double(gzip.count) / 1_048_576
        )
    }
}
