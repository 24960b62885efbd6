import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The memory of the current process, from `/proc/self/status` (Linux): the one reader of it for the benchmarks and
/// the tests' peak-memory checks (`Memory` in NetworkAgentTestSupport).
package enum ProcessMemory {
    /// Whether this system has `/proc/self/status` to read.
    package static var isReadable: Bool {
        FileManager.default.fileExists(atPath: "/proc/self/status")
    }

    /// A field of `/proc/self/status` in kilobytes, e.g. `VmHWM` (the peak resident set) or `VmRSS`.
    ///
    /// - Parameter field: The field's name, without the colon.
    /// - Returns: Its value in kB, or `nil` when the file or the field is missing.
    package static func kilobytes(_ field: String) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return nil }
        let prefix = field + ":"
        for line in status.split(separator: "\n") where line.hasPrefix(prefix) {
            return line.dropFirst(prefix.count).split(whereSeparator: \.isWhitespace).first.flatMap { Int($0) }
        }
        return nil
    }

    /// The resident set (`VmRSS`) in kilobytes after glibc's `malloc_trim(0)` returned freed heap to the system, so
    /// that what is resident is what is held (not the free pages the allocator keeps, which would hide a leak or a
    /// buffer of their size).
    ///
    /// - Returns: The value in kB, or `nil` when `/proc/self/status` or the field is missing.
    package static func residentKilobytesAfterTrim() -> Int? {
        _ = mallocTrim?(0)
        return kilobytes("VmRSS")
    }

    /// glibc's `malloc_trim`, which the Glibc module does not declare; `nil` on another C library.
    private static let mallocTrim: (@convention(c) (Int) -> Int32)? = {
        #if canImport(Glibc)
        guard let symbol = dlsym(nil, "malloc_trim") else { return nil }
        return unsafeBitCast(symbol, to: (@convention(c) (Int) -> Int32).self)
        #else
        return nil
        #endif
    }()

    /// The peak resident set (`VmHWM`) in MiB.
    package static var peakMiB: Double? {
        kilobytes("VmHWM").map { Double($0) / 1024 }
    }

    /// Resets the peak resident set to the current one (writes `5` to `/proc/self/clear_refs`, Linux 4.0+).
    ///
    /// - Returns: Whether the kernel accepted it; if not, peaks count from the start of the process.
    @discardableResult
    package static func resetPeak() -> Bool {
        let fd = open("/proc/self/clear_refs", O_WRONLY)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        let written = "5".withCString { write(fd, $0, 1) }
        return written == 1
    }
}
