import Foundation

#if canImport(Glibc)
import Glibc
// `stat` and `timespec` are declared by the toolchain's shims module: an optimised build, checking member imports
// per file, wants it named.
#if canImport(SwiftOverlayShims)
import SwiftOverlayShims
#endif
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The few POSIX file operations the disk store needs, with `errno` turned into ``DiskCachePlugin/Error``.
///
/// Plain system calls rather than `FileManager` or `Data.write(to:options:.atomic)`: the log appends at exact
/// offsets of files it keeps open (`pwrite`/`pread`) and controls exactly when a segment is synced.
enum FileIO {
    /// A message for an `errno` value, e.g. `No space left on device (errno 28)`.
    static func describe(_ code: Int32) -> String {
        "\(String(cString: strerror(code))) (errno \(code))"
    }

    static func ioError(_ operation: String, _ path: String, code: Int32 = errno) -> DiskCachePlugin.Error {
        DiskCachePlugin.Error(.io, "\(operation) \(path): \(describe(code))", systemErrorNumber: code)
    }

    /// Writes all of `data` at `offset` of an open file (`pwrite(2)`, retried on short writes and `EINTR`).
    ///
    /// - Returns: `nil`, or the `errno` of the failure.
    static func writeAll(_ descriptor: Int32, _ data: some ContiguousBytes, at offset: Int) -> Int32? {
        data.withUnsafeBytes { buffer -> Int32? in
            guard let base = buffer.baseAddress else { return nil }
            var done = 0
            while done < buffer.count {
                let written = pwrite(descriptor, base + done, buffer.count - done, off_t(offset + done))
                if written < 0 {
                    if errno == EINTR { continue }
                    return errno
                }
                done += written
            }
            return nil
        }
    }

    /// Reads into a buffer from `offset` until it is full or the file ends; returns the count read, or `nil` with
    /// `errno` set.
    private static func readAll(_ descriptor: Int32, _ buffer: UnsafeMutableRawBufferPointer, at offset: Int) -> Int? {
        guard let base = buffer.baseAddress else { return 0 }
        var total = 0
        while total < buffer.count {
            let count = pread(descriptor, base + total, buffer.count - total, off_t(offset + total))
            if count < 0 {
                if errno == EINTR { continue }
                return nil
            }
            if count == 0 { break }
            total += count
        }
        return total
    }

    /// Reads a whole file. Returns `nil` when the file does not exist.
    static func readFile(_ path: String) throws(DiskCachePlugin.Error) -> Data? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            if errno == ENOENT { return nil }
            throw ioError("open", path)
        }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { throw ioError("stat", path) }
        let size = Int(status.st_size)
        var data = Data(count: size)
        guard let total = data.withUnsafeMutableBytes({ readAll(descriptor, $0, at: 0) }) else {
            throw ioError("read", path)
        }
        // A file that shrank while being read comes back short; the length check then rejects it.
        return total == size ? data : data.prefix(total)
    }

    /// Reads up to `count` bytes at `offset` of an open file.
    static func readRange(_ descriptor: Int32, count: Int, at offset: Int) -> Data? {
        var data = Data(count: count)
        guard let total = data.withUnsafeMutableBytes({ readAll(descriptor, $0, at: offset) }) else { return nil }
        return total == count ? data : data.prefix(total)
    }

    /// Whether an open file has been deleted (no name links to it any more: a cache cleaner removed it or its
    /// directory), or cannot be examined.
    ///
    /// On Linux this asks `statx(2)` for the link count alone. `fstat` asks for the change and modification times as
    /// well, and since Linux 6.13 a file system with fine-grained timestamps (ext4, XFS, btrfs, tmpfs) then gives
    /// the next write a new timestamp and writes the inode back: the disk store checks its segment before every
    /// append, so every append paid for an inode update (a C loop of 1,500-byte appends: `fstat` + `pwrite` 2.5 µs
    /// of CPU each, `statx` of the link count + `pwrite` 1.75 µs, `pwrite` alone 1.4 µs). Where `statx` is missing
    /// (glibc before 2.28, a kernel before 4.11, a sandbox that refuses it), and on other systems, `fstat`.
    static func isUnlinked(_ descriptor: Int32) -> Bool {
        #if canImport(Glibc)
        if let links = LinkCount.of(descriptor) { return links == 0 }
        #endif
        var status = stat()
        return fstat(descriptor, &status) != 0 || status.st_nlink == 0
    }

    /// Removes a file; a missing file is not an error.
    static func removeFile(_ path: String) {
        unlink(path)
    }

    /// Removes an empty directory; a missing or non-empty one is left as it is.
    static func removeDirectory(_ path: String) {
        rmdir(path)
    }

    /// Syncs a directory, so that renames and unlinks in it survive a power loss.
    static func syncDirectory(_ path: String) throws(DiskCachePlugin.Error) {
        let descriptor = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { throw ioError("open directory", path) }
        defer { close(descriptor) }
        guard fsync(descriptor) == 0 else { throw ioError("fsync directory", path) }
    }

    /// Creates a directory and its parents with mode 0700; an existing directory is fine.
    static func makeDirectory(_ path: String) throws(DiskCachePlugin.Error) {
        do {
            try FileManager.default.createDirectory(
                atPath: path,
                withIntermediateDirectories: true,
                attributes: [.posixPermissions: 0o700]
            )
        } catch {
            throw DiskCachePlugin.Error(.unavailable, "cannot create directory \(path): \(error.localizedDescription)")
        }
        var status = stat()
        guard stat(path, &status) == 0, status.st_mode & S_IFMT == S_IFDIR else {
            throw DiskCachePlugin.Error(.unavailable, "\(path) is not a directory")
        }
    }

    /// The names in a directory (no `.` or `..`), or `nil` when it cannot be read.
    static func names(in path: String) -> [String]? {
        try? FileManager.default.contentsOfDirectory(atPath: path)
    }
}

#if canImport(Glibc)
/// `statx(2)` of an open file's link count (``FileIO/isUnlinked(_:)``). The Swift Glibc module does not declare
/// `statx` (glibc declares it only for `_GNU_SOURCE`), so it is looked up by name, and its `struct statx` (Linux's
/// stable user-space ABI: 256 bytes, `stx_mask` at offset 0, `stx_nlink` at offset 16) read from a buffer.
enum LinkCount {
    /// `statx(dirfd, pathname, flags, mask, statxbuf)`.
    private typealias Statx =
        @convention(c) (Int32, UnsafePointer<CChar>, Int32, UInt32, UnsafeMutableRawPointer) -> Int32

    /// glibc's `statx`, if it has one, in a box that can be shared: a C function pointer holds no state.
    private struct Function: @unchecked Sendable {
        let call: Statx
    }

    /// `AT_EMPTY_PATH`: the descriptor itself is examined.
    private static let emptyPath: Int32 = 0x1000
    /// `STATX_NLINK`.
    private static let linkCountMask: UInt32 = 0x4
    private static let resultSize = 256
    private static let linkCountOffset = 16

    private static let function: Function? = {
        // RTLD_DEFAULT (a null handle): the symbol as the program's libraries define it.
        guard let symbol = dlsym(nil, "statx") else { return nil }
        return Function(call: unsafeBitCast(symbol, to: Statx.self))
    }()

    /// The link count, or `nil` when `statx` is missing, fails or does not report it (then `fstat` decides).
    static func of(_ descriptor: Int32) -> UInt32? {
        guard let function else { return nil }
        return withUnsafeTemporaryAllocation(byteCount: resultSize, alignment: 8) { buffer -> UInt32? in
            guard let base = buffer.baseAddress else { return nil }
            base.initializeMemory(as: UInt8.self, repeating: 0, count: resultSize)
            guard function.call(descriptor, "", emptyPath, linkCountMask, base) == 0,
                base.load(as: UInt32.self) & linkCountMask != 0
            else { return nil }
            return base.load(fromByteOffset: linkCountOffset, as: UInt32.self)
        }
    }
}
#endif
