import Foundation
import NetworkAgentToolSupport
public import Testing

/// Peak resident memory, for the `…MemoryBound` tests: when they run, and the figures they compare (read with
/// `ProcessMemory`, the reader the benchmarks use too).
public enum Memory {
    /// Whether this is the memory pass: Linux, and `NETWORKAGENT_MEMORY_TESTS=1`. Peak-memory tests run only in a
    /// process of their own (`Scripts/test` starts one): in the shared test process, other suites allocate
    /// concurrently and would distort the peak.
    public static var isAvailable: Bool {
        ProcessMemory.isReadable && isolated
    }

    /// Whether this process was started for the memory pass (`NETWORKAGENT_MEMORY_TESTS=1`).
    public static let isolated = ProcessInfo.processInfo.environment["NETWORKAGENT_MEMORY_TESTS"] == "1"

    /// Why a peak-memory test is skipped outside the memory pass.
    public static let runsAlone: Comment =
        "peak-memory tests run alone, with NETWORKAGENT_MEMORY_TESTS=1 on Linux (Scripts/test's memory run)"

    /// Whether this process can reset its peak (VmHWM); the peak-memory tests measure nothing without it.
    public static var canResetPeak: Bool { resetPeak() }

    /// Why a peak-memory test is skipped, or stops, when the peak cannot be reset.
    public static let needsPeakReset: Comment =
        "writing 5 to /proc/self/clear_refs must reset the peak (VmHWM), or an earlier peak hides any growth"

    /// Resets VmHWM to the current RSS (Linux `clear_refs` value 5).
    ///
    /// - Returns: Whether that was allowed.
    @discardableResult
    public static func resetPeak() -> Bool {
        ProcessMemory.resetPeak()
    }

    /// A `kB` value from /proc/self/status, such as VmHWM or VmRSS.
    ///
    /// - Parameter key: The field's name, without the colon.
    /// - Returns: The value, or `nil` when it cannot be read.
    public static func kilobytes(_ key: String) -> Int? {
        ProcessMemory.kilobytes(key)
    }

    /// Prints a measured growth, so the memory pass's log carries the figure.
    ///
    /// - Parameters:
    ///   - what: What grew.
    ///   - grownKiB: By how much the peak grew.
    public static func report(_ what: String, grownKiB: Int) {
        print("memory: \(what): peak grew by \(grownKiB) KiB")
    }
}
