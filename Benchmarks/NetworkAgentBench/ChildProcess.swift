import Foundation

/// Runs programs to completion and collects what they print.
enum ChildProcess {
    /// How a program ended and what it printed.
    struct Output: Sendable {
        let status: Int32
        let stdout: String
        let stderr: String

        /// The last lines of standard error, for a failure message.
        var errorSummary: String {
            let lines = stderr.split(separator: "\n").suffix(5).joined(separator: " | ")
            return lines.isEmpty ? "exit status \(status)" : "exit status \(status): \(lines)"
        }
    }

    /// Runs `executable` with `arguments`, standard input empty, and waits for it without blocking a thread.
    ///
    /// Output goes through temporary files, so a chatty program cannot fill a pipe and stall.
    /// - Throws: When the program cannot be started or its output read.
    static func run(_ executable: String, _ arguments: [String]) async throws -> Output {
        let directory = FileManager.default.temporaryDirectory
        let stdoutURL = directory.appending(path: "networkagent-bench-\(UUID().uuidString).out")
        let stderrURL = directory.appending(path: "networkagent-bench-\(UUID().uuidString).err")
        defer {
            try? FileManager.default.removeItem(at: stdoutURL)
            try? FileManager.default.removeItem(at: stderrURL)
        }
        _ = FileManager.default.createFile(atPath: stdoutURL.path, contents: nil)
        _ = FileManager.default.createFile(atPath: stderrURL.path, contents: nil)
        let stdoutHandle = try FileHandle(forWritingTo: stdoutURL)
        let stderrHandle = try FileHandle(forWritingTo: stderrURL)

        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = stdoutHandle
        process.standardError = stderrHandle
        let status: Int32 = try await withCheckedThrowingContinuation { continuation in
            process.terminationHandler = { process in continuation.resume(returning: process.terminationStatus) }
            do {
                try process.run()
            } catch {
                process.terminationHandler = nil
                continuation.resume(throwing: error)
            }
        }
        withExtendedLifetime(process) {}
        try stdoutHandle.close()
        try stderrHandle.close()
        return Output(
            status: status,
            stdout: try String(contentsOf: stdoutURL, encoding: .utf8),
            stderr: (try? String(contentsOf: stderrURL, encoding: .utf8)) ?? ""
        )
    }

    /// The path of this executable, to start it again in a hidden mode.
    static func currentExecutable() throws -> String {
        try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
    }

    /// The first executable called `name` on `PATH` or in the extra directories.
    static func find(_ name: String, alsoIn extraDirectories: [String] = []) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        let directories = path.split(separator: ":").map(String.init) + extraDirectories
        return directories.lazy.map { "\($0)/\(name)" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }
}
