import CZlib
import Foundation

/// The container an ``Inflater`` expects, or ``automatic`` to detect it from the first bytes.
public enum InflateFormat: Sendable, Hashable {
    /// Detects gzip (magic `1f 8b`), zlib (a valid 2-byte zlib header) or, failing both, raw deflate.
    case automatic
    /// One or more gzip members (RFC 1952); concatenated members decode to the concatenation of their contents.
    case gzip
    /// A zlib stream (RFC 1950), what HTTP calls `Content-Encoding: deflate`.
    case zlib
    /// Bare deflate data (RFC 1951), which some servers send for `Content-Encoding: deflate`.
    case raw
}

/// A streaming decompressor for gzip, zlib and raw deflate data, with a guard against decompression bombs.
///
/// Feed compressed bytes with ``decompress(_:)`` in chunks of any size, then call ``finish()`` to confirm that the
/// stream was complete. Output is produced at most 1 MiB per zlib call and checked against ``Limits`` after each
/// call, so a malicious input is stopped as soon as it passes a limit, with memory bounded by that limit rather
/// than by what the input would expand to.
///
/// ```swift
/// var inflater = Inflater(limits: .init(maximumOutputBytes: 50 << 20))
/// var body = Data()
/// for chunk in chunks {
///     body += try inflater.decompress(chunk)
/// }
/// body += try inflater.finish()  // throws if the input was cut short
/// ```
///
/// A gzip stream may hold several members back to back (`cat a.gz b.gz`); they decode to the concatenation of
/// their contents. Anything after the end of a zlib or raw stream, or bytes after a gzip member that do not start
/// another member (such as zero padding), are reported as ``GzipPlugin/Error/Code/corruptData``.
///
/// `Inflater` is `~Copyable` and `Sendable` for the same reasons as ``Deflater``: zlib's stream must stay at one
/// address and be ended exactly once, and all access to it goes through `mutating` methods.
public struct Inflater: ~Copyable, @unchecked Sendable {
    /// Bounds on how much a stream may expand, to stop decompression bombs early.
    ///
    /// Both limits apply to the total output of one stream (all gzip members included), counted since the
    /// inflater was created, finished or reset.
    public struct Limits: Sendable, Hashable {
        /// The most decompressed bytes allowed; one more byte throws ``GzipPlugin/Error/Code/outputLimitExceeded``.
        public var maximumOutputBytes: Int

        /// The highest allowed ratio of decompressed bytes to compressed bytes consumed.
        ///
        /// Deflate cannot exceed about 1032:1, which only runs of a single repeated byte reach; ordinary text and
        /// JSON compress 3:1 to 20:1. Exceeding it throws ``GzipPlugin/Error/Code/ratioLimitExceeded``.
        public var maximumRatio: Double

        /// The output size below which ``maximumRatio`` is not checked.
        ///
        /// Small, repetitive bodies legitimately have extreme ratios (512 KiB of spaces gzips to 544 bytes, about
        /// 960:1), and a ratio computed over a few bytes means little, so the ratio is only enforced once the output
        /// is larger than this; 1 MiB by default.
        public var ratioCheckThreshold: Int

        /// Creates limits.
        ///
        /// - Parameters:
        ///   - maximumOutputBytes: The most decompressed bytes allowed; 256 MiB by default. Negative values mean 0.
        ///   - maximumRatio: The highest allowed output-to-input ratio; 1000 by default.
        ///   - ratioCheckThreshold: The output size from which the ratio is enforced; 1 MiB by default.
        public init(
            maximumOutputBytes: Int = 256 * 1024 * 1024,
            maximumRatio: Double = 1000,
            ratioCheckThreshold: Int = 1024 * 1024
        ) {
            self.maximumOutputBytes = max(maximumOutputBytes, 0)
            self.maximumRatio = maximumRatio
            self.ratioCheckThreshold = ratioCheckThreshold
        }

        /// 256 MiB of output at most, and a ratio of at most 1000:1 once the output passes 1 MiB.
        public static let `default` = Limits()

        /// No limits at all; only for trusted input.
        public static let unlimited = Limits(maximumOutputBytes: .max, maximumRatio: .infinity)
    }

    /// The most output one `inflate` call may produce before the limits are checked again.
    private static let maximumStep = 1024 * 1024
    /// Grow the output buffer when less than this is free before calling `inflate`.
    private static let minimumFreeOutput = 32 * 1024

    private let stream: UnsafeMutablePointer<z_stream>
    private let requestedFormat: InflateFormat
    private let limits: Limits
    /// Whether `inflateInit2` succeeded, so `inflateEnd` is owed.
    private var zlibInitialized = false
    /// The format being decoded; `nil` until the first bytes arrive.
    private var activeFormat: InflateFormat?
    /// In automatic mode, a lone first byte held back until the second one arrives.
    private var pendingByte: UInt8?
    /// Whether zlib reported the end of the current stream or gzip member.
    private var streamEnded = false
    private var totalIn = 0
    private var totalOut = 0
    private var failure: GzipPlugin.Error?

    /// Creates a decompressor.
    ///
    /// zlib's state is allocated on the first call to ``decompress(_:)``.
    /// - Parameters:
    ///   - format: The container to expect, or ``InflateFormat/automatic`` (the default) to detect it.
    ///   - limits: Bounds on the output, ``Limits/default`` unless given.
    public init(format: InflateFormat = .automatic, limits: Limits = .default) {
        let stream = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
        stream.initialize(to: z_stream())
        self.stream = stream
        self.requestedFormat = format
        self.limits = limits
    }

    deinit {
        if zlibInitialized {
            inflateEnd(stream)
        }
        stream.deinitialize(count: 1)
        stream.deallocate()
    }

    /// Decompresses the next chunk of compressed input.
    ///
    /// - Parameter chunk: The next compressed bytes; may be empty or split anywhere, even inside a header.
    /// - Returns: All the output this chunk made available, possibly none.
    /// - Throws: ``GzipPlugin/Error/Code/corruptData`` or ``GzipPlugin/Error/Code/checksumMismatch`` for bad input,
    ///   ``GzipPlugin/Error/Code/outputLimitExceeded`` or ``GzipPlugin/Error/Code/ratioLimitExceeded`` when a limit is passed, or
    ///   ``GzipPlugin/Error/Code/zlibFailure``. After an error every call throws it again until ``reset()``.
    public mutating func decompress(_ chunk: some DataProtocol) throws(GzipPlugin.Error) -> Data {
        var output = OutputBuffer(initialCapacity: initialCapacity(forInput: chunk.count))
        try feed(chunk, into: &output)
        return output.takeData()
    }

    /// Confirms that the input formed a complete stream and prepares for a new one.
    ///
    /// All output has already been returned by ``decompress(_:)``, so the result is empty; it exists so callers
    /// can treat ``Inflater`` and ``Deflater`` alike. After a successful call the inflater decodes a new stream,
    /// detecting its format again in automatic mode.
    /// - Returns: Empty data.
    /// - Throws: ``GzipPlugin/Error/Code/truncatedInput`` when the input stopped before the end of the stream (including
    ///   when there was no input at all), or the error a previous call threw.
    public mutating func finish() throws(GzipPlugin.Error) -> Data {
        if let failure {
            throw failure
        }
        guard streamEnded else {
            let error = GzipPlugin.Error(
                code: .truncatedInput,
                message: totalIn == 0 && pendingByte == nil
                    ? "no compressed input" : "the input ended before the end of the compressed stream"
            )
            failure = error
            throw error
        }
        reset()
        return Data()
    }

    /// Forgets the current stream, its progress toward the limits and any error, ready for a new stream.
    public mutating func reset() {
        activeFormat = nil
        pendingByte = nil
        streamEnded = false
        totalIn = 0
        totalOut = 0
        failure = nil
    }

    /// Decompresses a whole buffer in one call.
    ///
    /// - Parameters:
    ///   - data: The complete compressed stream.
    ///   - format: The container to expect, or ``InflateFormat/automatic`` (the default) to detect it.
    ///   - limits: Bounds on the output, ``Limits/default`` unless given.
    /// - Returns: The decompressed bytes.
    /// - Throws: ``GzipPlugin/Error/Code/truncatedInput`` if `data` ends early, and otherwise the errors of
    ///   ``decompress(_:)``.
    public static func decompress(
        _ data: some DataProtocol,
        format: InflateFormat = .automatic,
        limits: Limits = .default
    ) throws(GzipPlugin.Error) -> Data {
        var inflater = Inflater(format: format, limits: limits)
        var output = OutputBuffer(initialCapacity: inflater.initialCapacity(forInput: data.count, streaming: false))
        try inflater.feed(data, into: &output)
        _ = try inflater.finish()
        return output.takeData()
    }

    /// Tells whether `data` starts like a gzip or zlib stream, for deciding whether a body really is compressed.
    ///
    /// Use it on a body labelled `Content-Encoding: gzip` or `deflate` that may already have been decoded on the
    /// way in (FoundationNetworking does so but keeps the header). gzip is recognized by its magic bytes
    /// `1f 8b 08`, which text never starts with. A zlib header is only two bytes and a few texts (such as `80`,
    /// `x^` or `Hj`) happen to form one, so for zlib the header must also be followed by data that zlib accepts:
    /// at least 8 bytes are needed (a complete zlib stream is never shorter) and up to the first 1 KiB is trial
    /// decoded. Raw deflate has no signature and is never reported.
    /// - Parameter data: The body, or at least its first bytes.
    /// - Returns: ``InflateFormat/gzip`` or ``InflateFormat/zlib`` when the data looks compressed, otherwise `nil`
    ///   (including for empty data).
    public static func isCompressed(_ data: some DataProtocol) -> InflateFormat? {
        var iterator = data.makeIterator()
        guard let first = iterator.next(), let second = iterator.next() else {
            return nil
        }
        if first == 0x1f && second == 0x8b {
            guard let method = iterator.next(), method == 8 else {
                return nil
            }
            // Reserved flag bits must be zero when the flag byte is present.
            if let flags = iterator.next(), flags & 0xe0 != 0 {
                return nil
            }
            return .gzip
        }
        guard isZlibHeader(first, second), second & 0x20 == 0, data.count >= 8 else {
            return nil
        }
        return trialInflateAccepts(data.prefix(1024)) ? .zlib : nil
    }

    // MARK: - Internals

    /// Whether two bytes form a zlib header: deflate method, window of at most 32 KiB, valid check bits.
    private static func isZlibHeader(_ cmf: UInt8, _ flg: UInt8) -> Bool {
        cmf & 0x0f == 8 && cmf >> 4 <= 7 && (UInt16(cmf) << 8 | UInt16(flg)) % 31 == 0
    }

    /// Decodes a prefix of a zlib stream and tells whether zlib found it valid so far.
    private static func trialInflateAccepts(_ prefix: some DataProtocol) -> Bool {
        var inflater = Inflater(format: .zlib, limits: .unlimited)
        // At most 1 KiB of input expands to at most about 1 MiB, so the trial output stays small.
        var output = OutputBuffer(initialCapacity: 64 * 1024)
        do {
            try inflater.feed(prefix, into: &output)
            return true
        } catch {
            return false
        }
    }

    /// The first output allocation for a streaming call, from the input size and the room left under the limit.
    ///
    /// A streaming call caps its guess at 16 MiB; a one-shot call guesses four times the input, which costs little
    /// when too large because untouched pages of a big allocation are never committed.
    private func initialCapacity(forInput count: Int, streaming: Bool = true) -> Int {
        let cap = streaming ? 16 << 20 : Int.max / 8
        let guess = count > cap / 4 ? cap : max(count * 4, 64 * 1024)
        let room = limits.maximumOutputBytes - totalOut
        return min(guess, room == .max ? room : room + 1)
    }

    /// Feeds every region of `input` through zlib, appending the output and recording the first error.
    private mutating func feed(_ input: some DataProtocol, into output: inout OutputBuffer) throws(GzipPlugin.Error) {
        if let failure {
            throw failure
        }
        var error: GzipPlugin.Error?
        for region in input.regions where error == nil {
            error = region.withUnsafeBytes { bytes in
                self.consume(bytes, into: &output)
            }
        }
        if let error {
            failure = error
            throw error
        }
    }

    /// Detects the format if needed, then inflates `bytes`.
    private mutating func consume(_ bytes: UnsafeRawBufferPointer, into output: inout OutputBuffer) -> GzipPlugin.Error?
    {
        if activeFormat == nil {
            var format = requestedFormat
            if format == .automatic {
                guard let first = pendingByte ?? bytes.first else {
                    return nil
                }
                let secondIndex = pendingByte == nil ? 1 : 0
                guard secondIndex < bytes.count else {
                    pendingByte = first
                    return nil
                }
                let second = bytes[secondIndex]
                if first == 0x1f && second == 0x8b {
                    format = .gzip
                } else if Self.isZlibHeader(first, second) {
                    format = .zlib
                } else {
                    format = .raw
                }
            }
            if let error = start(format) {
                return error
            }
            if let held = pendingByte {
                pendingByte = nil
                let error = withUnsafeBytes(of: held) { heldBytes in
                    self.inflate(heldBytes, into: &output)
                }
                if let error {
                    return error
                }
            }
        }
        return inflate(bytes, into: &output)
    }

    /// Initializes (or re-initializes) zlib for `format`.
    private mutating func start(_ format: InflateFormat) -> GzipPlugin.Error? {
        let windowBits: Int32
        switch format {
        case .gzip: windowBits = 15 + 16
        case .raw: windowBits = -15
        case .zlib, .automatic: windowBits = 15
        }
        let status = zlibInitialized ? inflateReset2(stream, windowBits) : CZlib_inflateInit2(stream, windowBits)
        guard status == Z_OK else {
            return GzipPlugin.Error.zlib(
                status,
                stream: stream,
                operation: zlibInitialized ? "inflateReset2" : "inflateInit2"
            )
        }
        zlibInitialized = true
        activeFormat = format
        return nil
    }

    /// Runs `inflate` over `bytes` until they are consumed and all resulting output is written.
    ///
    /// `bytes` is only used inside this call, so zlib never keeps a pointer into a buffer that may go away.
    private mutating func inflate(_ bytes: UnsafeRawBufferPointer, into output: inout OutputBuffer) -> GzipPlugin.Error?
    {
        var cursor = bytes.baseAddress
        var remaining = bytes.count
        while remaining > 0 {
            // avail_in is 32 bits wide: hand over at most 1 GiB at a time.
            let piece = min(remaining, 1 << 30)
            CZlib_setInput(stream, cursor, UInt32(piece))
            cursor = cursor.map { $0 + piece }
            remaining -= piece
            if let error = drain(into: &output) {
                return error
            }
        }
        return nil
    }

    /// Calls `inflate` until the current input is used up, checking the limits after every call.
    private mutating func drain(into output: inout OutputBuffer) -> GzipPlugin.Error? {
        while true {
            if streamEnded {
                guard stream.pointee.avail_in > 0 else {
                    return nil
                }
                if let error = startNextMember() {
                    return error
                }
            }
            if let error = inflateOnce(into: &output) {
                return error
            }
            if let error = limitError() {
                return error
            }
            // zlib stops either for lack of output space (loop again) or, with space left, for lack of input.
            if !streamEnded && stream.pointee.avail_out != 0 {
                return nil
            }
        }
    }

    /// Input is left after the end of the compressed stream: resets zlib to decode the next gzip member into the
    /// same output, or, for zlib and raw deflate, which have one stream only, returns the error.
    private mutating func startNextMember() -> GzipPlugin.Error? {
        guard activeFormat == .gzip else {
            return GzipPlugin.Error(
                code: .corruptData,
                message: "unexpected data after the end of the compressed stream"
            )
        }
        inflateReset(stream)
        streamEnded = false
        return nil
    }

    /// Calls `inflate` once into fresh output space (at most one byte past the output limit), counts the bytes it
    /// consumed and produced, and turns a failing zlib status into the error.
    private mutating func inflateOnce(into output: inout OutputBuffer) -> GzipPlugin.Error? {
        let room = limits.maximumOutputBytes - totalOut
        // One byte past the limit is enough to know it was exceeded.
        let step = room < Self.maximumStep ? room + 1 : Self.maximumStep
        let space: UnsafeMutableRawBufferPointer
        do {
            space = try output.freeSpace(
                atLeast: min(step, Self.minimumFreeOutput),
                limit: room == .max ? .max : room + 1
            )
        } catch {
            return error
        }
        let offered = min(space.count, step)
        CZlib_setOutput(stream, space.baseAddress, UInt32(offered))
        let availableBefore = Int(stream.pointee.avail_in)
        let status = CZlib.inflate(stream, Z_NO_FLUSH)
        let produced = offered - Int(stream.pointee.avail_out)
        output.didWrite(produced)
        totalOut += produced
        totalIn += availableBefore - Int(stream.pointee.avail_in)
        switch status {
        case Z_OK, Z_BUF_ERROR:
            // Z_BUF_ERROR only means no progress was possible; the checks after this call decide what happens next.
            return nil
        case Z_STREAM_END:
            streamEnded = true
            return nil
        case Z_NEED_DICT:
            return GzipPlugin.Error(
                code: .corruptData,
                message: "the zlib stream needs a preset dictionary",
                zlibStatus: Int(status)
            )
        case Z_DATA_ERROR:
            return dataError(status)
        default:
            return GzipPlugin.Error.zlib(status, stream: stream, operation: "inflate")
        }
    }

    /// The error for output past ``Limits/maximumOutputBytes`` or an expansion past ``Limits/maximumRatio``, if
    /// either limit is exceeded so far.
    private func limitError() -> GzipPlugin.Error? {
        if totalOut > limits.maximumOutputBytes {
            return GzipPlugin.Error(
                code: .outputLimitExceeded,
                message: "decompressed output exceeds the limit of \(limits.maximumOutputBytes) bytes"
            )
        }
        if totalOut > limits.ratioCheckThreshold
            && Double(totalOut) > limits.maximumRatio * Double(max(totalIn, 1))
        {
            return GzipPlugin.Error(
                code: .ratioLimitExceeded,
                message: "\(totalIn) compressed bytes expanded to \(totalOut) bytes, "
                    + "past the limit of \(limits.maximumRatio):1"
            )
        }
        return nil
    }

    /// Classifies a Z_DATA_ERROR: a wrong trailer checksum or length, or otherwise corrupt data.
    private func dataError(_ status: Int32) -> GzipPlugin.Error {
        let message = stream.pointee.msg.map { String(cString: $0) } ?? "invalid compressed data"
        // zlib's wording for trailer mismatches: "incorrect data check" (CRC-32 or Adler-32) and
        // "incorrect length check" (gzip ISIZE).
        let isTrailer = message.contains("incorrect data check") || message.contains("incorrect length check")
        return GzipPlugin.Error(
            code: isTrailer ? .checksumMismatch : .corruptData,
            message: message,
            zlibStatus: Int(status)
        )
    }
}
