import Dispatch
import Foundation
import NetworkAgent

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads a request body (a file or a one-shot `InputStream`) off the engine thread, into a bounded buffer that
/// libcurl's read callback takes from.
///
/// A read that blocks (a slow disk, a stream waiting for its producer) blocks only this body's queue: the engine
/// thread never reads. When the buffer is empty the read callback pauses the upload (`CURL_READFUNC_PAUSE`); the
/// reader tells the engine when bytes (or the end) arrive, and the engine resumes it (`curl_easy_pause`).
final class CurlBodyReader: @unchecked Sendable {
    // @unchecked Sendable: `source` (the file descriptor, the InputStream), `chunk` and `streamOpened` are used only by
    // blocks on `queue`, which is serial, and the descriptor is closed in `deinit`, after the last of them (each
    // holds the reader); everything the engine thread shares with them is in `buffer`, under its lock.

    enum Source {
        /// A file descriptor open for reading, and the file's size: read with `pread` from any offset.
        case file(fd: Int32, size: Int)
        /// A one-shot stream, read once from its start.
        case stream(InputStream)
    }

    /// What the read callback gets.
    enum Take: Equatable {
        /// This many bytes were copied.
        case bytes(Int)
        /// The body has ended.
        case end
        /// Nothing yet: the reader is reading.
        case empty
        /// The body could not be read.
        case failed(String)
    }

    private struct Buffer {
        var bytes = Data()
        /// Where the unread bytes of `bytes` start.
        var start = 0
        /// The file offset of the next read.
        var offset = 0
        var ended = false
        var failure: String?
        /// A read is scheduled or running.
        var reading = false
        /// Changed by a seek: a read that started before it is discarded.
        var generation = 0
        var onReady: (@Sendable () -> Void)?
        var available: Int { bytes.count - start }
    }

    /// The bytes read ahead of libcurl, at most.
    static let bufferLimit = 256 << 10
    /// The bytes one read asks for.
    static let chunkSize = 64 << 10

    private let source: Source
    private let queue = DispatchQueue(label: "NetworkAgentCurl.body")
    private let buffer = Locked(Buffer())
    private var streamOpened = false
    /// Where one read lands before it is appended to the buffer (reused).
    private var chunk = Data(count: chunkSize)

    init(_ source: Source) {
        self.source = source
    }

    deinit {
        if case .file(let fd, _) = source { close(fd) }
    }

    /// The body's size, when known (a file's).
    var size: Int? {
        if case .file(_, let size) = source { return size }
        return nil
    }

    /// Starts reading ahead; `onReady` is called (on the reader's queue) when bytes, the end or a failure arrive
    /// after the buffer was empty.
    func start(onReady: @escaping @Sendable () -> Void) {
        let schedule = buffer.withLock { buffer in
            buffer.onReady = onReady
            return Self.claimRead(&buffer)
        }
        if schedule { queue.async { self.fill() } }
    }

    /// Copies waiting bytes into libcurl's buffer (engine thread); reads ahead again once the buffer runs low.
    func take(into destination: UnsafeMutableRawBufferPointer) -> Take {
        guard let base = destination.baseAddress, destination.count > 0 else { return .bytes(0) }
        let (take, schedule) = buffer.withLock { buffer -> (Take, Bool) in
            let count = min(destination.count, buffer.available)
            if count > 0 {
                let start = buffer.start
                buffer.bytes.withUnsafeBytes { bytes in
                    guard let source = bytes.baseAddress else { return }
                    base.copyMemory(from: source + start, byteCount: count)
                }
                buffer.start += count
                if buffer.start == buffer.bytes.count {
                    buffer.bytes.removeAll(keepingCapacity: true)
                    buffer.start = 0
                }
                return (.bytes(count), Self.claimRead(&buffer))
            }
            if let failure = buffer.failure { return (.failed(failure), false) }
            if buffer.ended { return (.end, false) }
            return (.empty, Self.claimRead(&buffer))
        }
        if schedule { queue.async { self.fill() } }
        return take
    }

    /// Moves a file body to `offset` for libcurl (engine thread), which sends a request again on a fresh connection
    /// when a reused one died before answering; a stream cannot go back.
    func seek(to offset: Int) -> Bool {
        guard case .file(_, let size) = source, offset >= 0, offset <= size else { return false }
        let schedule = buffer.withLock { buffer in
            buffer.bytes.removeAll(keepingCapacity: true)
            buffer.start = 0
            buffer.offset = offset
            buffer.ended = false
            buffer.failure = nil
            buffer.generation += 1
            return Self.claimRead(&buffer)
        }
        if schedule { queue.async { self.fill() } }
        return true
    }

    /// Whether a read should be scheduled now (and marks it so): none running, the body not done, room to fill.
    private static func claimRead(_ buffer: inout Buffer) -> Bool {
        guard !buffer.reading, !buffer.ended, buffer.failure == nil, buffer.onReady != nil,
            buffer.available < bufferLimit / 2
        else { return false }
        buffer.reading = true
        return true
    }

    /// One read, on the reader's queue; schedules the next while the buffer has room.
    private func fill() {
        let (generation, offset) = buffer.withLock { ($0.generation, $0.offset) }
        let count = chunk.withUnsafeMutableBytes { bytes -> Int in
            guard let base = bytes.baseAddress else { return -1 }
            switch source {
            case .file(let fd, let size):
                let wanted = min(bytes.count, size - offset)
                guard wanted > 0 else { return 0 }
                return pread(fd, base, wanted, off_t(offset))
            case .stream(let stream):
                if !streamOpened {
                    streamOpened = true
                    stream.open()
                }
                return stream.read(base.assumingMemoryBound(to: UInt8.self), maxLength: bytes.count)
            }
        }
        let failure: String? =
            switch source {
            case .file: count < 0 ? "errno \(errno)" : nil
            case .stream(let stream):
                count < 0 ? (stream.streamError.map { "\($0)" } ?? "the stream failed") : nil
            }
        let (again, notify) = buffer.withLock { buffer -> (Bool, (@Sendable () -> Void)?) in
            // A seek came meanwhile: read again from its offset.
            guard buffer.generation == generation else { return (true, nil) }
            let wasEmpty = buffer.available == 0
            if let failure {
                buffer.failure = failure
            } else if count == 0 {
                buffer.ended = true
            } else {
                buffer.bytes.append(chunk.prefix(count))
                buffer.offset += count
            }
            buffer.reading = false
            let again = Self.claimRead(&buffer)
            return (again, wasEmpty ? buffer.onReady : nil)
        }
        if again { queue.async { self.fill() } }
        notify?()
    }
}
