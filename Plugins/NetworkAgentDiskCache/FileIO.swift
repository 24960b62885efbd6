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
