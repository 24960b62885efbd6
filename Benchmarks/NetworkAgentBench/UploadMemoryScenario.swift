import Foundation
import NetworkAgent
import NetworkAgentTestServer
import NetworkAgentToolSupport

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `upload_rss`: how much a process's peak resident memory grows while it uploads a large multipart file part
/// through the provider. Each repetition is a fresh child process (`--measure-upload`), so neither the bench's
/// own memory nor an earlier repetition counts.
@MainActor
enum UploadMemoryScenario {
    /// The size of the uploaded file: 1 GiB, 256 MiB in quick mode.
    static func fileSize(quick: Bool) -> Int {
        quick ? 256 << 20 : 1 << 30
    }

    static func run(_ context: BenchContext) async throws -> Measurement {
        let server = try await context.server()
        let size = fileSize(quick: context.options.quick)
        let file = try context.temporaryFile(named: "upload-\(size >> 20)MiB.bin", size: size)
        defer { try? FileManager.default.removeItem(at: file) }
        let sizeMiB = Double(size) / 1_048_576

        var growths: [Double] = []
        var peaks: [Double] = []
        for _ in 0..<context.options.repetitions {
            let output = try await ChildProcess.run(
                context.executable,
                ["--measure-upload", server.url(BenchRoutes.upload).absoluteString, file.path]
            )
            guard output.status == 0, let report = UploadReport(line: output.output) else {
                throw BenchFailure("the upload child failed: \(output.errorSummary)")
            }
            guard report.status == 200 else { throw BenchFailure("the upload was answered \(report.status)") }
            if let received = report.received, received < size {
                throw BenchFailure("the server received \(received) bytes of a \(size)-byte file")
            }
            growths.append(Double(report.afterKB - report.beforeKB) / 1024)
            peaks.append(Double(report.afterKB) / 1024)
        }
        var measurement = Measurement(baseline: Array(repeating: sizeMiB, count: growths.count), subject: growths)
        measurement.peakMemoryMiB = peaks.max()
        measurement.note = "child process per repetition; baseline = file size; peak = the child's VmHWM"
        return measurement
    }
}

/// The line a `--measure-upload` child prints: `status before_kb after_kb received` (received `-` if unknown).
struct UploadReport: Sendable {
    let status: Int
    let beforeKB: Int
    let afterKB: Int
    /// The bytes the server says it received (the whole request for nginx, the body for the loopback server).
    let received: Int?

    init(status: Int, beforeKB: Int, afterKB: Int, received: Int?) {
        self.status = status
        self.beforeKB = beforeKB
        self.afterKB = afterKB
        self.received = received
    }

    /// Parses the last line of the child's output.
    init?(line: String) {
        guard let last = line.split(separator: "\n").last else { return nil }
        let fields = last.split(separator: " ")
        guard fields.count == 4, let status = Int(fields[0]), let before = Int(fields[1]), let after = Int(fields[2])
        else { return nil }
        self.init(status: status, beforeKB: before, afterKB: after, received: Int(fields[3]))
    }

    var line: String {
        "\(status) \(beforeKB) \(afterKB) \(received.map(String.init) ?? "-")"
    }
}

/// The hidden `--measure-upload URL FILE` mode: one upload, then its report on standard output.
enum UploadChildMode {
    /// Uploads `file` to `url` as a multipart file part through a provider without plugins.
    ///
    /// - Returns: The exit status.
    static func run(url: URL, file: URL) async -> Int32 {
        let provider = NetworkAgentProvider<BenchEndpoint>(agent: NetworkAgent(transport: URLSessionTransport()))
        let endpoint = BenchEndpoint.upload(url, file: file)
        guard ProcessMemory.resetPeak() else {
            log("cannot reset the peak memory (/proc/self/clear_refs); the figure would include start-up")
            return 1
        }
        guard let before = ProcessMemory.kilobytes("VmHWM") else {
            log("cannot read VmHWM from /proc/self/status")
            return 1
        }
        do {
            let (data, response) = try await provider.request(endpoint: endpoint)
            guard let after = ProcessMemory.kilobytes("VmHWM") else { return 1 }
            let status = (response as? HTTPURLResponse)?.statusCode ?? 0
            let report = UploadReport(status: status, beforeKB: before, afterKB: after, received: received(in: data))
            FileHandle.standardOutput.write(Data((report.line + "\n").utf8))
            return 0
        } catch {
            log("the upload failed: \(error)")
            return 1
        }
    }

    /// The `received` count of the servers' answer `{"received": N}`.
    private static func received(in data: Data) -> Int? {
        let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
        return (object?["received"] as? NSNumber)?.intValue
    }
}
