import Foundation

/// Why a read from the peer could not complete.
enum ReadFailure: Error {
    /// The peer closed its side before the expected bytes arrived.
    case endOfStream
    /// The line or header block grew past the allowed size.
    case limitExceeded
    /// The socket failed with this errno.
    case socketError(Int32)
}

/// Buffered, blocking reads from one connected socket. Used by a single connection thread only.
struct SocketReader {
    private static let carriageReturn = UInt8(ascii: "\r")
    private static let lineFeed = UInt8(ascii: "\n")

    let fd: Int32
    /// Bytes received but not consumed yet start at `start`.
    private var buffer: [UInt8] = []
    private var start = 0
    /// Receive scratch space, reused for every `recv`.
    private var scratch: [UInt8]

    init(fd: Int32, chunkSize: Int = 64 * 1024) {
        self.fd = fd
        self.scratch = [UInt8](repeating: 0, count: max(chunkSize, 1024))
    }

    private var bufferedCount: Int { buffer.count - start }

    /// Receives more bytes into the buffer; returns false at end of stream.
    private mutating func fill() throws(ReadFailure) -> Bool {
        compact()
        let result = scratch.withUnsafeMutableBytes { Socket.receive(fd, into: $0) }
        switch result {
        case .bytes(let count):
            buffer.append(contentsOf: scratch[0..<count])
            return true
        case .endOfStream:
            return false
        case .failure(let code):
            throw .socketError(code)
        }
    }

    private mutating func compact() {
        if start == buffer.count {
            buffer.removeAll(keepingCapacity: true)
            start = 0
        } else if start >= 64 * 1024 {
            buffer.removeFirst(start)
            start = 0
        }
    }

    /// Reads a request head: everything up to and including the empty line that ends the header block.
    ///
    /// Empty lines before the request line are skipped. Lines may end in CRLF or a bare LF.
    /// - Returns: the head bytes, or nil if the peer closed the connection cleanly before sending anything.
    mutating func readHead(limit: Int) throws(ReadFailure) -> [UInt8]? {
        var scanned = 0  // bytes after `start` already searched; relative, so it survives compaction
        while true {
            if scanned == 0 {
                while start < buffer.count
                    && (buffer[start] == Self.carriageReturn || buffer[start] == Self.lineFeed)
                {
                    start += 1
                }
            }
            if let end = findEndOfHead(from: start + scanned) {
                guard end - start <= limit else { throw .limitExceeded }
                let head = Array(buffer[start..<end])
                start = end
                return head
            }
            scanned = bufferedCount
            guard bufferedCount <= limit else { throw .limitExceeded }
            guard try fill() else {
                if bufferedCount == 0 { return nil }
                throw .endOfStream
            }
        }
    }

    /// Returns the index just past the empty line that ends the head, searching from `index`.
    private func findEndOfHead(from index: Int) -> Int? {
        var position = max(index, start)
        while position < buffer.count {
            if buffer[position] == Self.lineFeed {
                // An empty line is LF right after LF, or CR LF right after LF.
                if position - 1 >= start && buffer[position - 1] == Self.lineFeed {
                    return position + 1
                }
                if position - 2 >= start && buffer[position - 1] == Self.carriageReturn
                    && buffer[position - 2] == Self.lineFeed
                {
                    return position + 1
                }
            }
            position += 1
        }
        return nil
    }

    /// Reads one line and returns it without its CRLF or LF terminator.
    mutating func readLine(limit: Int) throws(ReadFailure) -> [UInt8] {
        var scanned = 0
        while true {
            if let index = buffer[(start + scanned)...].firstIndex(of: Self.lineFeed) {
                var end = index
                if end > start && buffer[end - 1] == Self.carriageReturn { end -= 1 }
                guard end - start <= limit else { throw .limitExceeded }
                let line = Array(buffer[start..<end])
                start = index + 1
                return line
            }
            scanned = bufferedCount
            guard bufferedCount <= limit else { throw .limitExceeded }
            guard try fill() else { throw .endOfStream }
        }
    }

    /// Reads exactly `count` bytes and appends them to `data`.
    mutating func read(count: Int, appendingTo data: inout Data) throws(ReadFailure) {
        var remaining = count
        let fromBuffer = min(remaining, bufferedCount)
        if fromBuffer > 0 {
            buffer[start..<(start + fromBuffer)].withUnsafeBytes { data.append(contentsOf: $0) }
            start += fromBuffer
            remaining -= fromBuffer
        }
        while remaining > 0 {
            let wanted = min(remaining, scratch.count)
            let result = scratch.withUnsafeMutableBytes { bytes in
                Socket.receive(fd, into: UnsafeMutableRawBufferPointer(rebasing: bytes[0..<wanted]))
            }
            switch result {
            case .bytes(let received):
                scratch.withUnsafeBytes { data.append(contentsOf: UnsafeRawBufferPointer(rebasing: $0[0..<received])) }
                remaining -= received
            case .endOfStream:
                throw .endOfStream
            case .failure(let code):
                throw .socketError(code)
            }
        }
    }
}
