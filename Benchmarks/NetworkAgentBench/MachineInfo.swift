import Foundation

/// What the table's header says about the machine: the figures depend on it and on what else it was doing.
enum MachineInfo {
    /// The CPU model from `/proc/cpuinfo`.
    static var cpuModel: String {
        let info = (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)) ?? ""
        let line = info.split(separator: "\n").first { $0.hasPrefix("model name") }
        return line?.split(separator: ":", maxSplits: 1).last?.trimmingCharacters(in: .whitespaces) ?? "unknown CPU"
    }

    /// The 1, 5 and 15 minute load averages from `/proc/loadavg`.
    static var loadAverage: [Double] {
        let text = (try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8)) ?? ""
        return text.split(separator: " ").prefix(3).compactMap { Double($0) }
    }

    /// One line: cores, CPU, memory.
    static var summary: String {
        let memory = String(format: "%.1f", Double(ProcessInfo.processInfo.physicalMemory) / 1_073_741_824)
        return "\(ProcessInfo.processInfo.activeProcessorCount) cores, \(cpuModel), \(memory) GiB"
    }

    /// `1.23 0.98 0.50`.
    static func format(_ load: [Double]) -> String {
        load.map { String(format: "%.2f", $0) }.joined(separator: " ")
    }
}
