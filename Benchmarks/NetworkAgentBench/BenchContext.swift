import Foundation
import NetworkAgentGzip
import NetworkAgentToolSupport

/// What the scenarios of one run share: the options, the server (started on first use), a temporary folder and
/// the codec sample.
@MainActor
final class BenchContext {
    let options: BenchOptions
    /// This program, for the hidden modes (`--serve-loopback`, `--measure-upload`).
    let executable: String
    /// Deleted at the end of the run.
    let temporaryDirectory: URL
    private var startedServer: BenchServer?
    private var sample: GzipSample?
    private var python: String??

    init(options: BenchOptions, executable: String) throws {
        self.options = options
        self.executable = executable
        let directory = FileManager.default.temporaryDirectory
            .appending(path: "networkagent-bench-\(ProcessInfo.processInfo.processIdentifier)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        self.temporaryDirectory = directory
        Cleanup.add { try? FileManager.default.removeItem(at: directory) }
    }

    /// The server, started on the first call (see ``BenchServer/start(_:executable:)``).
    func server() async throws -> BenchServer {
        if let startedServer { return startedServer }
        let server = try await BenchServer.start(options.server, executable: executable)
        Cleanup.add { server.stop() }
        log("server: \(server.label) at \(server.baseURL.absoluteString)")
        startedServer = server
        return server
    }

    /// The label of the server, once started.
    var serverLabel: String? {
        startedServer?.label
    }

    /// Python and its zlib version, looked up once; `nil` without a usable `python3`.
    func pythonVersion() async -> String? {
        if let python { return python }
        let version = await PythonZlib.version()
        python = .some(version)
        return version
    }

    /// A file of `size` bytes of pseudo-random data in the temporary folder, written in 1 MiB blocks.
    func temporaryFile(named name: String, size: Int) throws -> URL {
        let url = temporaryDirectory.appending(path: name)
        _ = FileManager.default.createFile(atPath: url.path, contents: nil)
        let handle = try FileHandle(forWritingTo: url)
        defer { try? handle.close() }
        var random = SplitMix64(seed: UInt64(size))
        let block = Data((0..<(1 << 17)).flatMap { _ in withUnsafeBytes(of: random.next()) { Array($0) } })
        var written = 0
        while written < size {
            let count = min(block.count, size - written)
            try handle.write(contentsOf: count == block.count ? block : block.prefix(count))
            written += count
        }
        return url
    }

    /// The codec sample, made on the first call: JSON of ``GzipScenarios/sampleSize(quick:)`` bytes, its gzip at
    /// level 6, both also written to files for Python.
    func gzipSample() throws -> GzipSample {
        if let sample { return sample }
        let raw = JSONSample.make(bytes: GzipScenarios.sampleSize(quick: options.quick))
        let gzip = try Deflater.compress(raw, format: .gzip, level: GzipScenarios.level)
        let rawFile = temporaryDirectory.appending(path: "sample.json")
        let gzipFile = temporaryDirectory.appending(path: "sample.json.gz")
        try raw.write(to: rawFile)
        try gzip.write(to: gzipFile)
        let made = GzipSample(raw: raw, gzip: gzip, rawFile: rawFile, gzipFile: gzipFile)
        sample = made
        return made
    }
}
