import Foundation

/// Runs another program and waits for it without blocking a thread, for tests that run command-line tools.
///
/// Waiting with `Process.waitUntilExit()` or reading a pipe to its end inside an async test blocks one of the
/// cooperative pool's few threads (two on a two-core machine) for as long as the program runs, which stalls every
/// other test, timers included. This waits on the termination handler instead and collects the output in files.
public enum ChildProcess {
    /// What a finished program left.
    public struct Result: Sendable {
        /// The exit status (or the signal number when it was killed).
        public let status: Int32
        /// Standard output, as bytes.
        public let outputData: Data
        /// Standard output, as UTF-8.
        public var output: String { String(decoding: outputData, as: UTF8.self) }
        /// Standard error, as UTF-8.
        public let error: String
    }

    /// Runs a program to its end.
    ///
    /// - Parameters:
    ///   - executable: The program; a bare name is looked up on `PATH`.
    ///   - arguments: Its arguments.
    ///   - environment: Variables added to this process's environment.
    ///   - input: Bytes for its standard input, if any.
    /// - Returns: Its exit status and output.
    /// - Throws: When the program cannot be started.
    public static func run(
        _ executable: String,
        _ arguments: [String],
        environment: [String: String] = [:],
        input: Data? = nil
    ) async throws -> Result {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("child-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let outURL = directory.appendingPathComponent("stdout")
        let errURL = directory.appendingPathComponent("stderr")
        let inURL = directory.appendingPathComponent("stdin")
        try Data().write(to: outURL)
        try Data().write(to: errURL)
        try (input ?? Data()).write(to: inURL)

        let process = Process()
        if executable.contains("/") {
            process.executableURL = URL(fileURLWithPath: executable)
            process.arguments = arguments
        } else {
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = [executable] + arguments
        }
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let out = try FileHandle(forWritingTo: outURL)
        let err = try FileHandle(forWritingTo: errURL)
        let stdin = try FileHandle(forReadingFrom: inURL)
        defer {
            try? out.close()
            try? err.close()
            try? stdin.close()
        }
        process.standardOutput = out
        process.standardError = err
        process.standardInput = stdin

        let status: Int32 = try await withCheckedThrowingContinuation { continuation in
            process.terminationHandler = { finished in continuation.resume(returning: finished.terminationStatus) }
            do {
                try process.run()
            } catch {
                process.terminationHandler = nil
                continuation.resume(throwing: error)
            }
        }
        return Result(
            status: status,
            outputData: (try? Data(contentsOf: outURL)) ?? Data(),
            error: String(decoding: (try? Data(contentsOf: errURL)) ?? Data(), as: UTF8.self)
        )
    }
}
