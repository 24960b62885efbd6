import CCurl
import Foundation
import NetworkAgent

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// One hop of one request: what to send, and the state of its transfer on the engine thread.
final class CurlTransfer: @unchecked Sendable {
    // @unchecked Sendable: the `let`s are set before the transfer is handed to the engine (through its locked
    // command queue, which orders every later access after them). Every `var` is read and written only on the
    // engine thread: in its loop, in libcurl's callbacks (which libcurl calls from curl_multi_perform and
    // curl_easy_pause, on that thread), and when it completes the transfer.

    /// Why a transfer ended before libcurl finished it.
    enum Stop {
        case cancelled
        case timedOut
        case responseTooLarge(limit: Int)
        /// The consumer of a streamed body went away.
        case consumerGone
    }

    /// Where the response goes.
    enum Sink {
        /// Collect the whole body; resume with it at the end.
        case collect(CheckedContinuation<CurlTransfer.Outcome, any Error>)
        /// Resume at the response head with a body stream.
        case stream(CheckedContinuation<CurlTransfer.Outcome, any Error>, bufferLimit: Int)
    }

    /// What the caller gets back.
    struct Outcome: Sendable {
        let response: HTTPURLResponse
        let data: Data
        /// The body stream, for ``Sink/stream(_:bufferLimit:)``.
        let body: HTTPByteStream?
        /// From the start of the hop to its response head.
        let timeToHeaders: Duration
    }

    /// The request body.
    enum Body {
        case none
        case data(Data)
        /// A file descriptor open for reading, and the file's size.
        case file(fd: Int32, size: Int)
        /// A one-shot stream, read in chunks, sent chunked.
        case stream(InputStream)
    }

    let request: URLRequest
    let url: URL
    let urlString: String
    let method: String
    /// `Name: value` lines (`Name;` for an empty value), and `Expect:` unless the request set one.
    let headerLines: [String]
    let hasUserAgent: Bool
    let body: Body
    /// CURLOPT_TIMEOUT_MS for a collected transfer; 0 for none.
    let timeoutMilliseconds: Int
    /// For a streamed transfer: when the response head must have arrived (uptime nanoseconds), or nil.
    let headDeadline: UInt64?
    let maximumResponseBytes: Int?
    let progressHandler: TransferProgress.Handler?
    let started = ContinuousClock.now

    // Engine-thread state.
    var sink: Sink?
    var easy: CurlEasyHandle?
    var slist: UnsafeMutablePointer<curl_slist>?
    var stop: Stop?
    var isFinished = false
    var statusCode = 0
    var httpVersion = "HTTP/1.1"
    var responseHeaders: [(name: String, value: String)] = []
    var headersDone = false
    var timeToHeaders: Duration = .zero
    var response: HTTPURLResponse?
    var data = Data()
    var received = 0
    var writer: HTTPBodyWriter?
    /// The consumer's buffer filled up: the next write callback pauses the transfer.
    var pauseNext = false
    var paused = false
    var bodyOffset = 0
    var streamOpened = false
    var bodyReadFailed = false
    var progress = TransferProgress()
    var lastReported = TransferProgress()
    var timings: HTTPTransferTimings?
    weak var engine: CurlEngine?

    init(
        request: URLRequest,
        url: URL,
        body: Body,
        timeoutMilliseconds: Int,
        headDeadline: UInt64?,
        maximumResponseBytes: Int?,
        progressHandler: TransferProgress.Handler?
    ) {
        self.request = request
        self.url = url
        self.urlString = url.absoluteString
        let method = request.httpMethod?.uppercased() ?? "GET"
        self.method = method
        self.body = body
        self.timeoutMilliseconds = timeoutMilliseconds
        self.headDeadline = headDeadline
        self.maximumResponseBytes = maximumResponseBytes
        self.progressHandler = progressHandler
        var lines: [String] = []
        var hasUserAgent = false
        var hasExpect = false
        for (name, value) in request.allHTTPHeaderFields ?? [:] {
            let lowered = name.lowercased()
            if lowered == "user-agent" { hasUserAgent = true }
            if lowered == "expect" { hasExpect = true }
            lines.append(value.isEmpty ? "\(name);" : "\(name): \(value)")
        }
        if !hasExpect { lines.append("Expect:") }
        self.headerLines = lines
        self.hasUserAgent = hasUserAgent
    }

    deinit {
        if case .file(let fd, _) = body { close(fd) }
        if let slist { curl_slist_free_all(slist) }
    }

    // MARK: - Callbacks (engine thread)

    /// One header line of a response (status line, field, or the blank line ending the head).
    func receiveHeader(_ bytes: UnsafeRawBufferPointer) {
        // After the final head only trailers of a chunked body come here; they are not part of the response.
        guard !headersDone else { return }
        var end = bytes.count
        while end > 0, bytes[end - 1] == 0x0A || bytes[end - 1] == 0x0D { end -= 1 }
        if end == 0 {
            // The end of a head; a 1xx head (100 Continue) is followed by another.
            if statusCode >= 200 && !headersDone {
                headersDone = true
                if case .stream = sink { deliverHead() }
            }
            return
        }
        let line = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[0..<end]), as: UTF8.self)
        if line.hasPrefix("HTTP/") {
            responseHeaders.removeAll(keepingCapacity: true)
            let parts = line.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: true)
            httpVersion = parts.first.map(String.init) ?? "HTTP/1.1"
            statusCode = parts.count > 1 ? Int(parts[1]) ?? 0 : 0
            return
        }
        if let first = line.utf8.first, first == 0x20 || first == 0x09, let last = responseHeaders.indices.last {
            responseHeaders[last].value += " " + line.trimmingCharacters(in: .whitespaces)
            return
        }
        guard let colon = line.firstIndex(of: ":") else { return }
        let name = String(line[..<colon])
        let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        responseHeaders.append((name, value))
    }

    /// Header fields with duplicates merged by ", " (compared case-insensitively; the first spelling is kept), as
    /// URLSession does.
    func mergedHeaderFields() -> [String: String] {
        var fields: [String: String] = [:]
        fields.reserveCapacity(responseHeaders.count)
        var spelling: [String: String] = [:]
        for (name, value) in responseHeaders {
            let key = name.lowercased()
            if let existing = spelling[key] {
                fields[existing] = (fields[existing] ?? "") + ", " + value
            } else {
                spelling[key] = name
                fields[name] = value
            }
        }
        return fields
    }
}

/// A pooled easy handle and its error buffer.
final class CurlEasyHandle {
    static let errorBufferSize = 256
    let pointer: UnsafeMutableRawPointer
    let errorBuffer: UnsafeMutablePointer<CChar>

    init?() {
        guard let pointer = curl_easy_init() else { return nil }
        self.pointer = pointer
        errorBuffer = .allocate(capacity: Self.errorBufferSize)
        errorBuffer.initialize(repeating: 0, count: Self.errorBufferSize)
    }

    deinit {
        curl_easy_cleanup(pointer)
        errorBuffer.deallocate()
    }

    /// libcurl's message for the last failure, when it wrote one.
    var errorMessage: String? {
        let message = String(cString: errorBuffer)
        return message.isEmpty ? nil : message
    }
}
