import CZlib
import Foundation

/// A streaming compressor producing gzip (RFC 1952), zlib (RFC 1950) or raw deflate (RFC 1951) data.
///
/// Feed input with ``compress(_:)`` in chunks of any size, then call ``finish()`` once to get the final bytes
/// (including the gzip or zlib trailer). Memory use is fixed by zlib's window and does not grow with the input.
///
/// ```swift
/// var deflater = try Deflater(format: .gzip)
/// var body = Data()
/// for chunk in chunks {
///     body += try deflater.compress(chunk)
/// }
/// body += try deflater.finish()
/// ```
///
/// After ``finish()`` the same value compresses a new, independent stream.
///
/// ## Why `~Copyable`
/// zlib keeps a pointer back to its `z_stream`, so the stream lives in a heap allocation that must never move and
/// must be released with `deflateEnd` exactly once. A non-copyable struct gives that for free: there is only ever
/// one owner, `deinit` runs exactly once, and there is no reference counting or locking on the hot path (a final
/// class would need neither, but would allow two references to drive one zlib stream). Store it in a class or actor
/// when it has to live in a copyable container such as an async iterator.
///
/// It is `Sendable` because every operation that touches the zlib stream is `mutating`, so the exclusivity rules
/// guarantee a single user at a time, and moving the value to another task transfers sole ownership.
public struct Deflater: ~Copyable, @unchecked Sendable {
    /// The container written around the deflate data.
    public enum Format: Sendable, Hashable {
        /// A gzip member: 10-byte header, deflate data, CRC-32 and length trailer (`Content-Encoding: gzip`).
        case gzip
        /// A zlib stream: 2-byte header, deflate data, Adler-32 trailer (`Content-Encoding: deflate`).
        case zlib
        /// Bare deflate data with no header or trailer.
        case raw

        var windowBits: Int32 {
            switch self {
            case .gzip: 15 + 16
            case .zlib: 15
            case .raw: -15
            }
        }
    }

    /// The size of the first output allocation of a streaming call.
    private static let streamingOutputCapacity = 64 * 1024
    /// Grow the output buffer when less than this is free before calling `deflate`.
    private static let minimumFreeOutput = 8 * 1024

    private let stream: UnsafeMutablePointer<z_stream>
    private var failure: GzipPlugin.Error?

    /// Creates a compressor.
    ///
    /// - Parameters:
    ///   - format: The container to produce; gzip by default.
    ///   - level: The compression level, from 0 (store only) to 9 (smallest output); 6 by default, like gzip.
    /// - Throws: ``GzipPlugin/Error/Code/invalidArgument`` for a level outside `0...9`, ``GzipPlugin/Error/Code/zlibFailure``
    ///   when zlib cannot allocate its state.
    public init(format: Format = .gzip, level: Int = 6) throws(GzipPlugin.Error) {
        guard (0...9).contains(level) else {
            throw GzipPlugin.Error(code: .invalidArgument, message: "compression level \(level) is outside 0...9")
        }
        let stream = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
        stream.initialize(to: z_stream())
        let status = CZlib_deflateInit2(stream, Int32(level), format.windowBits, 8, Z_DEFAULT_STRATEGY)
        guard status == Z_OK else {
            let error = GzipPlugin.Error.zlib(status, stream: stream, operation: "deflateInit2")
            stream.deinitialize(count: 1)
            stream.deallocate()
            throw error
        }
        self.stream = stream
    }

    deinit {
        deflateEnd(stream)
        stream.deinitialize(count: 1)
        stream.deallocate()
    }

    /// Compresses a chunk of input.
    ///
    /// zlib buffers input internally, so the result is often empty or shorter than what will eventually be
    /// produced for this chunk; the rest comes out of later calls, ``flush()`` or ``finish()``.
    /// - Parameter chunk: The next bytes of the uncompressed input; may be empty.
    /// - Returns: The compressed bytes that became available, possibly none.
    /// - Throws: ``GzipPlugin/Error/Code/zlibFailure`` if zlib reports an internal error; the deflater is then unusable
    ///   until ``reset()``.
    public mutating func compress(_ chunk: some DataProtocol) throws(GzipPlugin.Error) -> Data {
        var output = OutputBuffer(initialCapacity: Self.streamingOutputCapacity)
        try run(chunk, flush: Z_NO_FLUSH, into: &output)
        return output.takeData()
    }

    /// Emits everything compressed so far, aligned to a byte boundary, without ending the stream.
    ///
    /// Use it when the receiver must be able to decode all input so far, for example before waiting on the next
    /// chunk of a slow request body. Each flush costs a few bytes and some compression ratio.
    /// - Returns: The compressed bytes that became available.
    /// - Throws: ``GzipPlugin/Error/Code/zlibFailure`` if zlib reports an internal error.
    public mutating func flush() throws(GzipPlugin.Error) -> Data {
        var output = OutputBuffer(initialCapacity: Self.streamingOutputCapacity)
        try run(Data(), flush: Z_SYNC_FLUSH, into: &output)
        return output.takeData()
    }

    /// Ends the stream and returns the remaining compressed bytes, including the gzip or zlib trailer.
    ///
    /// Afterwards the deflater starts a new, independent stream with the same format and level.
    /// - Returns: The final compressed bytes; never empty.
    /// - Throws: ``GzipPlugin/Error/Code/zlibFailure`` if zlib reports an internal error.
    public mutating func finish() throws(GzipPlugin.Error) -> Data {
        var output = OutputBuffer(initialCapacity: Self.streamingOutputCapacity)
        try run(Data(), flush: Z_FINISH, into: &output)
        deflateReset(stream)
        return output.takeData()
    }

    /// Discards any buffered input and starts a new stream, clearing a previous error.
    public mutating func reset() {
        deflateReset(stream)
        failure = nil
    }

    /// Compresses a whole buffer in one call.
    ///
    /// The output is written into a single allocation sized by zlib's worst-case bound, so nothing is copied.
    /// - Parameters:
    ///   - data: The uncompressed bytes.
    ///   - format: The container to produce; gzip by default.
    ///   - level: The compression level, from 0 to 9; 6 by default.
    /// - Returns: The complete compressed stream.
    /// - Throws: ``GzipPlugin/Error/Code/invalidArgument`` for a level outside `0...9`, ``GzipPlugin/Error/Code/zlibFailure`` if
    ///   zlib fails.
    public static func compress(
        _ data: some DataProtocol,
        format: Format = .gzip,
        level: Int = 6
    ) throws(GzipPlugin.Error)
        -> Data
    {
        var deflater = try Deflater(format: format, level: level)
        let bound = Int(deflateBound(deflater.stream, UInt(clamping: data.count)))
        var output = OutputBuffer(initialCapacity: max(bound, minimumFreeOutput))
        try deflater.run(data, flush: Z_NO_FLUSH, into: &output)
        try deflater.run(Data(), flush: Z_FINISH, into: &output)
        return output.takeData()
    }

    /// Feeds every region of `input` to zlib with `flush` applied after the last one.
    private mutating func run(
        _ input: some DataProtocol,
        flush: Int32,
        into output: inout OutputBuffer
    )
        throws(GzipPlugin.Error)
    {
        if let failure {
            throw failure
        }
        let stream = self.stream
        var error: GzipPlugin.Error?
        if !input.isEmpty {
            for region in input.regions where error == nil {
                error = region.withUnsafeBytes { bytes in
                    Self.deflate(stream, bytes, flush: Z_NO_FLUSH, into: &output)
                }
            }
        }
        if error == nil && flush != Z_NO_FLUSH {
            error = Self.deflate(stream, UnsafeRawBufferPointer(start: nil, count: 0), flush: flush, into: &output)
        }
        if let error {
            failure = error
            throw error
        }
    }

    /// Runs `deflate` over `bytes` until zlib has consumed them all and, for a flush, written everything out.
    ///
    /// `bytes` is only used inside this call, so it never outlives the buffer it points into.
    private static func deflate(
        _ stream: UnsafeMutablePointer<z_stream>,
        _ bytes: UnsafeRawBufferPointer,
        flush: Int32,
        into output: inout OutputBuffer
    ) -> GzipPlugin.Error? {
        var cursor = bytes.baseAddress
        var remaining = bytes.count
        repeat {
            // avail_in is 32 bits wide: hand over at most 1 GiB at a time.
            let piece = min(remaining, 1 << 30)
            CZlib_setInput(stream, cursor, UInt32(piece))
            cursor = cursor.map { $0 + piece }
            remaining -= piece
            let pieceFlush = remaining == 0 ? flush : Z_NO_FLUSH
            while true {
                let space: UnsafeMutableRawBufferPointer
                do {
                    space = try output.freeSpace(atLeast: minimumFreeOutput)
                } catch {
                    return error
                }
                let offered = min(space.count, 1 << 30)
                CZlib_setOutput(stream, space.baseAddress, UInt32(offered))
                let status = CZlib.deflate(stream, pieceFlush)
                output.didWrite(offered - Int(stream.pointee.avail_out))
                if status == Z_STREAM_END {
                    break
                }
                guard status == Z_OK || status == Z_BUF_ERROR else {
                    return GzipPlugin.Error.zlib(status, stream: stream, operation: "deflate")
                }
                // Done when all input is in and zlib stopped for lack of input rather than output space. Z_FINISH
                // instead keeps going until zlib reports the end of the stream.
                if pieceFlush != Z_FINISH && stream.pointee.avail_in == 0 && stream.pointee.avail_out != 0 {
                    break
                }
            }
        } while remaining > 0
        return nil
    }
}

extension GzipPlugin.Error {
    /// Builds an error for a failed zlib call, using zlib's message when it set one.
    static func zlib(_ status: Int32, stream: UnsafeMutablePointer<z_stream>, operation: String) -> GzipPlugin.Error {
        let detail = stream.pointee.msg.map { String(cString: $0) }
        let message: String
        switch status {
        case Z_MEM_ERROR:
            message = "\(operation): out of memory"
        case Z_VERSION_ERROR:
            message = "\(operation): incompatible zlib version"
        default:
            message = "\(operation) failed" + (detail.map { ": \($0)" } ?? "")
        }
        return GzipPlugin.Error(code: .zlibFailure, message: message, zlibStatus: Int(status))
    }
}
