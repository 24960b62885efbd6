import Foundation
import NetworkAgentTestServer

/// Where the programs the bench starts live.
enum Executables {
    /// The path of this executable, to start it again in a hidden mode.
    static func current() throws -> String {
        try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
    }

    /// The first executable called `name` on `PATH` or in the extra directories.
    static func find(_ name: String, alsoIn extraDirectories: [String] = []) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        let directories = path.split(separator: ":").map(String.init) + extraDirectories
        return directories.lazy.map { "\($0)/\(name)" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }
}

extension ChildProcess.Result {
    /// The last lines of standard error, for a failure message.
    var errorSummary: String {
        let lines = error.split(separator: "\n").suffix(5).joined(separator: " | ")
        return lines.isEmpty ? "exit status \(status)" : "exit status \(status): \(lines)"
    }
}
