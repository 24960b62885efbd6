import Foundation
import NetworkAgentTestServer

/// Python's `zlib` on the same bytes, the baseline of the codec scenarios: one `python3 -c` process per
/// repetition, timing only the (de)compression call with `time.perf_counter`.
enum PythonZlib {
    /// What Python is asked to do with the file.
    enum Operation: Sendable {
        /// `zlib.decompress(data, 31)`: a gzip member.
        case decompressGzip
        /// `zlib.compressobj(level, DEFLATED, 31)`: `compress` then `flush`, producing a gzip member.
        case compressGzip(level: Int)
    }

    /// One timed call: the seconds it took and the size of its output.
    struct Timing: Sendable {
        let seconds: Double
        let outputBytes: Int
    }

    private static let decompressScript = """
        import sys, time, zlib
        data = open(sys.argv[1], "rb").read()
        start = time.perf_counter()
        out = zlib.decompress(data, 31)
        elapsed = time.perf_counter() - start
        print(elapsed, len(out))
        """

    private static let compressScript = """
        import sys, time, zlib
        data = open(sys.argv[1], "rb").read()
        level = int(sys.argv[2])
        start = time.perf_counter()
        compressor = zlib.compressobj(level, zlib.DEFLATED, 31)
        out = compressor.compress(data) + compressor.flush()
        elapsed = time.perf_counter() - start
        print(elapsed, len(out))
        """

    /// `python3` and its zlib version, or `nil` when there is no usable `python3`.
    static func version() async -> String? {
        guard let python = Executables.find("python3"),
            let output = try? await ChildProcess.run(
                python,
                ["-c", "import sys, zlib; print(sys.version.split()[0], zlib.ZLIB_RUNTIME_VERSION)"]
            ),
            output.status == 0
        else { return nil }
        let parts = output.output.split(separator: " ").map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
        guard parts.count == 2 else { return nil }
        return "Python \(parts[0]), zlib \(parts[1])"
    }

    /// Runs `operation` on the contents of `file` in a fresh `python3`.
    ///
    /// - Throws: ``BenchFailure`` when Python is missing, fails, or prints something unexpected.
    static func time(_ operation: Operation, file: URL) async throws -> Timing {
        guard let python = Executables.find("python3") else { throw BenchFailure("python3 is not on PATH") }
        let arguments: [String] =
            switch operation {
            case .decompressGzip: ["-c", decompressScript, file.path]
            case .compressGzip(let level): ["-c", compressScript, file.path, String(level)]
            }
        let output = try await ChildProcess.run(python, arguments)
        let fields = output.output.split(whereSeparator: \.isWhitespace)
        guard output.status == 0, fields.count == 2, let seconds = Double(fields[0]), let bytes = Int(fields[1]),
            seconds > 0
        else {
            throw BenchFailure("python3 zlib failed: \(output.errorSummary) \(output.output)")
        }
        return Timing(seconds: seconds, outputBytes: bytes)
    }
}
