import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A growable `malloc` buffer that zlib writes into directly and that becomes a `Data` without copying.
///
/// Writing into the spare capacity of a `Data` would need `count` to grow first (which zero-fills), and writing
/// into a fixed scratch buffer would need a copy into the result; this buffer avoids both. Growth uses `realloc`,
/// which for large blocks remaps pages instead of copying them. Being `~Copyable`, the memory is owned by
/// exactly one value: it is freed by `deinit` unless ``takeData()`` hands it to a `Data`.
struct OutputBuffer: ~Copyable {
    private var base: UnsafeMutableRawPointer?
    private var capacity = 0
    private let initialCapacity: Int

    /// The number of bytes written so far.
    private(set) var count = 0

    /// Creates an empty buffer; nothing is allocated until the first ``freeSpace(atLeast:limit:)``.
    init(initialCapacity: Int) {
        self.initialCapacity = max(initialCapacity, 1)
    }

    deinit {
        free(base)
    }

    /// Returns the writable space past ``count``, growing the buffer when less than `minimum` bytes are free.
    ///
    /// The returned pointer stays valid until the next call to this method or until the buffer is consumed.
    /// - Parameters:
    ///   - minimum: The number of free bytes wanted; growth happens only when fewer are free.
    ///   - limit: The most free space worth having (for example the bytes left under an output limit); growth
    ///     never goes past `count + max(minimum, limit)`.
    /// - Throws: ``GzipPlugin/Error/Code/zlibFailure`` when memory cannot be allocated.
    mutating func freeSpace(
        atLeast minimum: Int,
        limit: Int = .max
    ) throws(GzipPlugin.Error) -> UnsafeMutableRawBufferPointer {
        if capacity - count < minimum || base == nil {
            let needed = count + minimum
            let doubled = capacity <= Int.max / 2 ? capacity * 2 : Int.max
            var newCapacity = max(needed, base == nil ? initialCapacity : doubled)
            let headroom = max(minimum, limit)
            if headroom <= Int.max - count {
                newCapacity = min(newCapacity, count + headroom)
            }
            guard let grown = realloc(base, newCapacity) else {
                throw GzipPlugin.Error(code: .zlibFailure, message: "cannot allocate \(newCapacity) bytes of output")
            }
            base = grown
            capacity = newCapacity
        }
        // `base` is non-nil here: it was either already allocated or just set above.
        return UnsafeMutableRawBufferPointer(start: base.map { $0 + count }, count: capacity - count)
    }

    /// Records that `written` bytes were written at the start of the space returned by ``freeSpace(atLeast:limit:)``.
    mutating func didWrite(_ written: Int) {
        count += written
    }

    /// Hands the written bytes to a `Data`, trimming unused capacity, and consumes the buffer.
    consuming func takeData() -> Data {
        let base = self.base
        let count = self.count
        let capacity = self.capacity
        discard self
        guard let base else {
            return Data()
        }
        if count < 4096 {
            // Small results: an exact-size copy is as cheap as wrapping and keeps no slack alive.
            let data = count == 0 ? Data() : Data(bytes: base, count: count)
            free(base)
            return data
        }
        var owned = base
        if capacity - count > 4096, let shrunk = realloc(base, count) {
            owned = shrunk
        }
        return Data(bytesNoCopy: owned, count: count, deallocator: .free)
    }
}
