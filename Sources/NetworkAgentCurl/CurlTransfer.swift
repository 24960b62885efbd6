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
    // @unchecked Sendable: the `let`s are set in the caller's task before the transfer is handed to the engine
    // (through its locked command queue, which orders every later access after them), and the caller's task touches
    // no `var` (its continuation travels in the `add` command). Every `var` is read and written only on the engine
    // thread: in its loop, in libcurl's callbacks (which libcurl calls from curl_multi_perform and curl_easy_pause, on
    // that thread), and when it ends the transfer. What runs elsewhere (the body reader, the progress relay, the body
    // stream's callbacks) reaches the transfer only through the engine's command queue. The header list `slist`
    // points to is built in `init` and not changed after; libcurl reads it on the engine thread while the transfer is
    // on the multi handle (which holds the transfer), and `deinit` frees it after the easy handle was reset.

    /// Why a transfer ended before libcurl finished it.
    enum Stop: Equatable, Sendable {
        case cancelled
        case timedOut
        case responseTooLarge(limit: Int)
        /// The consumer of a streamed body went away.
        case consumerGone
        /// libcurl's multi handle failed.
        case engineFailed(CurlTransport.Error)
        /// The transport was shut down.
        case shutdown
        /// The request body (a file or a stream) could not be read.
        case bodyUnreadable(String)
        /// libcurl refused an option the request cannot go without; nothing was sent.
        case refused(CURLoption, CURLcode)
        /// The engine could not start the transfer (no easy handle, the multi handle refused it).
        case unavailable(String)
    }

    /// A response head as the engine thread read it. The caller's task turns it into an `HTTPURLResponse`
    /// (``makeResponse()``): Foundation's initializer is most of a small response's cost, and the one engine thread
    /// serves every request of the transport.
    struct Head: Sendable {
        let url: URL
        let statusCode: Int
        let httpVersion: String
        /// The fields in arrival order, duplicates not merged yet.
        let fields: [(name: String, value: String)]
        let timings: HTTPTransferTimings?

        /// The response, with duplicate fields merged by ", " (compared case-insensitively; the first spelling is
        /// kept), as URLSession does.
        ///
        /// - Parameter added: A field to set on the merged fields (`fields[name] = value`), as the interceptor that
        ///   asked for it (``/NetworkAgent/HTTPTransportContext``'s `addedResponseField`) would on the response.
        func makeResponse(adding added: AddedResponseField? = nil) -> HTTPURLResponse? {
            guard statusCode > 0 else { return nil }
            var headerFields = CurlTransfer.merged(fields)
            if let added { headerFields[added.name] = added.value }
            return HTTPURLResponse.withTransferTimings(
                timings,
                url: url,
                statusCode: statusCode,
                httpVersion: httpVersion,
                headerFields: headerFields
            )
        }
    }

    /// What the caller gets back.
    struct Outcome: Sendable {
        let head: Head
        let data: Data
        /// The body stream, for ``Sink/stream(_:bufferLimit:)``.
        let body: HTTPByteStream?
        /// From the start of the hop to its response head.
        let timeToHeaders: Duration
    }

    /// How a hop failed after its response head had arrived (a body cut short, the deadline, a cancellation, the
    /// response limit): the caller still reports its time to headers, once, before throwing `error`.
    struct FailedAfterHeaders: Error {
        let error: NetworkAgentError
        let timeToHeaders: Duration
    }

    /// The request body.
    enum Body {
        case none
        /// Copied to libcurl on the engine thread.
        case data(Data)
        /// A file (sent with its length) or a one-shot stream (sent chunked), read off the engine thread.
        case reader(CurlBodyReader)
    }

    let request: URLRequest
    let url: URL
    let urlString: String
    let method: String
    /// The request's header list for CURLOPT_HTTPHEADER, built in the caller's task (not on the engine thread):
    /// `Name: value` lines (`Name;` for an empty value), `Expect:` unless the request set one, and the default
    /// `User-Agent` unless it has one. One allocation (``makeHeaderList(_:)``), owned by the transfer; freed with it.
    let slist: UnsafeMutablePointer<curl_slist>?
    let isHTTPS: Bool
    let body: Body
    /// CURLOPT_TIMEOUT_MS for a collected transfer; 0 for none.
    let timeoutMilliseconds: Int
    /// For a streamed transfer: when the response head must have arrived (uptime nanoseconds), or nil.
    let headDeadline: UInt64?
    let maximumResponseBytes: Int?
    /// Hands progress to the caller's handler off the engine thread; `nil` without a handler.
    let progress: CurlProgressRelay?
    let started = ContinuousClock.now

    // Engine-thread state. What the transfer may do next is `state` alone; the rest is what the actions use.
    var state = CurlTransferState.created
    /// The caller waiting for the head (streamed) or the whole response, until it is resumed.
    ///
    /// An `UnsafeContinuation`, not a checked one (which allocates a canary per call): it is resumed exactly once, by
    /// whoever takes it out of this property (``settle(_:message:verifyResult:)``, or the head's delivery of a
    /// stream), or by the transport when the engine refused the `add` command that carries it.
    var caller: UnsafeContinuation<Outcome, any Error>?
    /// The body stream's end, once the head was handed on (``CurlTransferState/Response/streaming(_:)``).
    var writer: HTTPBodyWriter?
    var easy: CurlEasyHandle?
    weak var engine: CurlEngine?
    var statusCode = 0
    var httpVersion = "HTTP/1.1"
    var responseHeaders: [(name: String, value: String)] = []
    /// From the start of the hop to the end of its final response head; zero until then.
    var timeToHeaders: Duration = .zero
    /// The timings a streamed response's head went to the caller with.
    var headTimings: HTTPTransferTimings?
    var data = Data()
    var received = 0
    /// How much of a ``Body/data(_:)`` body libcurl has taken.
    var bodyOffset = 0
    /// The last progress recorded for the relay.
    var reported = TransferProgress()
    var timings: HTTPTransferTimings?
    // Admission (CurlEngine): the origin whose connection limit the transfer counts against (HTTP/1.1 only), whether
    // it waits in the engine's line for room there, until when it may wait (uptime ns), and how long it waited
    // (taken off its libcurl timeout, which counts from when it was sent).
    var admission: CurlEngine.OriginAdmission?
    var isWaiting = false
    var waitDeadline: UInt64?
    var waitedMilliseconds = 0

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
        let urlString = url.absoluteString
        self.urlString = urlString
        // Foundation gives a GET's method as "GET": only another is uppercased.
        let requestMethod = request.httpMethod ?? "GET"
        let method = requestMethod == "GET" ? requestMethod : requestMethod.uppercased()
        self.method = method
        self.body = body
        self.timeoutMilliseconds = timeoutMilliseconds
        self.headDeadline = headDeadline
        self.maximumResponseBytes = maximumResponseBytes
        self.progress = progressHandler.map { CurlProgressRelay(handler: $0) }
        self.isHTTPS = Self.hasHTTPSScheme(urlString)
        // A GET or HEAD without a body needs no `Expect:` line (see `makeHeaderList`).
        var mayUpload = true
        if case .none = body, method == "GET" || method == "HEAD" { mayUpload = false }
        self.slist = Self.makeHeaderList(request.allHTTPHeaderFields ?? [:], suppressingExpect: mayUpload)
        // Room for a head's fields, made here rather than grown field by field on the engine thread.
        responseHeaders.reserveCapacity(16)
    }

    deinit {
        if let slist { UnsafeMutableRawPointer(slist).deallocate() }
    }

    /// The header list of a request with `fields` as a `curl_slist` in one allocation, its nodes first and then
    /// their lines as C strings, freed with `deallocate()`: `curl_slist_append` made two allocations per line (the
    /// node and a copy of the line), and libcurl only reads a CURLOPT_HTTPHEADER list, which its owner frees. `nil`
    /// for no lines (there always are: `User-Agent` is set unless the request sets it).
    ///
    /// With `suppressingExpect` (a transfer that may send a body), an empty `Expect:` line, unless the request has an
    /// `Expect` field, keeps libcurl from adding `Expect: 100-continue` to a large or chunked upload. A GET or HEAD
    /// without a body leaves it out: libcurl adds `Expect` only to a body it sends, so the request on the wire is the
    /// same, and libcurl walks one line fewer each time it looks for a header in the list (a dozen comparisons per
    /// request).
    static func makeHeaderList(
        _ fields: [String: String],
        suppressingExpect: Bool = true
    ) -> UnsafeMutablePointer<curl_slist>? {
        let expect = "Expect:"
        var hasUserAgent = false
        var hasExpect = !suppressingExpect
        var lineCount = 0
        var textCount = 0
        for (name, value) in fields {
            // The sensitive-header mark is never sent: left out here rather than removed from the request, which
            // would copy its every field.
            if HTTPFieldName.equal(name, URLRequest.sensitiveHeadersField) { continue }
            // Compared only when the length matches: most requests' names are neither.
            switch name.utf8.count {
            case 10 where HTTPFieldName.equal(name, "User-Agent"): hasUserAgent = true
            case 6 where !hasExpect && HTTPFieldName.equal(name, "Expect"): hasExpect = true
            default: break
            }
            lineCount += 1
            // `Name: value` or `Name;`, and the terminating zero.
            textCount += name.utf8.count + (value.isEmpty ? 1 : 2 + value.utf8.count) + 1
        }
        if !hasExpect {
            lineCount += 1
            textCount += expect.utf8.count + 1
        }
        if !hasUserAgent {
            lineCount += 1
            textCount += CurlOptions.defaultUserAgentLine.utf8.count + 1
        }
        guard lineCount > 0 else { return nil }
        let nodesSize = lineCount * MemoryLayout<curl_slist>.stride
        let memory = UnsafeMutableRawPointer.allocate(
            byteCount: nodesSize + textCount,
            alignment: MemoryLayout<curl_slist>.alignment
        )
        let nodes = memory.bindMemory(to: curl_slist.self, capacity: lineCount)
        let text = UnsafeMutableBufferPointer(
            start: (memory + nodesSize).bindMemory(to: UInt8.self, capacity: textCount),
            count: textCount
        )
        var node = 0
        var offset = 0
        func write(_ part: String) {
            offset = UnsafeMutableBufferPointer(rebasing: text[offset...]).initialize(from: part.utf8).1 + offset
        }
        func line(_ write: () -> Void) {
            let start = offset
            write()
            text[offset] = 0
            offset += 1
            let data = (memory + nodesSize + start).assumingMemoryBound(to: CChar.self)
            (nodes + node).initialize(to: curl_slist(data: data, next: node + 1 < lineCount ? nodes + node + 1 : nil))
            node += 1
        }
        for (name, value) in fields where !HTTPFieldName.equal(name, URLRequest.sensitiveHeadersField) {
            line {
                write(name)
                write(value.isEmpty ? ";" : ": ")
                write(value)
            }
        }
        if !hasExpect { line { write(expect) } }
        if !hasUserAgent { line { write(CurlOptions.defaultUserAgentLine) } }
        return nodes
    }

    /// Whether `urlString` begins with the scheme `https:` (in any case), read on its bytes.
    static func hasHTTPSScheme(_ urlString: String) -> Bool {
        var utf8 = urlString.utf8.makeIterator()
        for expected in "https:".utf8 {
            guard let byte = utf8.next() else { return false }
            // ASCII letters compare with their case bit set; ':' is compared as it is.
            guard byte == expected || (expected != UInt8(ascii: ":") && byte | 0x20 == expected) else { return false }
        }
        return true
    }

    // MARK: - Callbacks (engine thread)

    /// One header line of a response (status line, field, or the blank line ending the head).
    func receiveHeader(_ bytes: UnsafeRawBufferPointer) {
        // After the final head only trailers of a chunked body come here; they are not part of the response.
        guard state.awaitsHead else { return }
        var end = bytes.count
        while end > 0, bytes[end - 1] == 0x0A || bytes[end - 1] == 0x0D { end -= 1 }
        if end == 0 {
            // The end of a head; a 1xx head (100 Continue) is followed by another.
            if statusCode >= 200 { headEnded() }
            return
        }
        // Parsed on the bytes: a `String` per line and Foundation's trimming cost more than the rest of the head.
        if end >= 5, bytes[0] == 0x48, bytes[1] == 0x54, bytes[2] == 0x54, bytes[3] == 0x50, bytes[4] == 0x2F {
            // A status line ("HTTP/1.1 200 OK", "HTTP/2 200"): a new head, so the fields of a 1xx head go.
            responseHeaders.removeAll(keepingCapacity: true)
            parseStatusLine(UnsafeRawBufferPointer(rebasing: bytes[0..<end]))
            return
        }
        if bytes[0] == 0x20 || bytes[0] == 0x09 {
            // An obsolete folded line continues the previous field.
            guard let last = responseHeaders.indices.last else { return }
            let (start, stop) = Self.trimmed(bytes, from: 0, to: end)
            responseHeaders[last].value +=
                " " + String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<stop]), as: UTF8.self)
            return
        }
        guard let colon = bytes[0..<end].firstIndex(of: 0x3A) else { return }
        let name = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[0..<colon]), as: UTF8.self)
        let (start, stop) = Self.trimmed(bytes, from: colon + 1, to: end)
        let value = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<stop]), as: UTF8.self)
        responseHeaders.append((name, value))
    }

    /// The version and status code of a status line: the first two words separated by spaces.
    private func parseStatusLine(_ line: UnsafeRawBufferPointer) {
        var index = 0
        while index < line.count, line[index] != 0x20 { index += 1 }
        httpVersion = String(decoding: UnsafeRawBufferPointer(rebasing: line[0..<index]), as: UTF8.self)
        while index < line.count, line[index] == 0x20 { index += 1 }
        var code = 0
        var digits = 0
        while index < line.count, line[index] != 0x20 {
            let byte = line[index]
            // Not a number (or absurdly long): no status, as `Int(_:)` on the word gave.
            guard byte >= 0x30, byte <= 0x39, digits < 9 else {
                statusCode = 0
                return
            }
            code = code * 10 + Int(byte - 0x30)
            digits += 1
            index += 1
        }
        statusCode = code
    }

    /// The bounds of `bytes[from..<to]` without leading and trailing spaces and tabs.
    private static func trimmed(_ bytes: UnsafeRawBufferPointer, from: Int, to: Int) -> (Int, Int) {
        var start = from
        var stop = to
        while start < stop, bytes[start] == 0x20 || bytes[start] == 0x09 { start += 1 }
        while stop > start, bytes[stop - 1] == 0x20 || bytes[stop - 1] == 0x09 { stop -= 1 }
        return (start, stop)
    }

    /// Where the scheme and authority of `urlString` (`http://host:port`), the text before the path, end: that text
    /// is the key of the engine's per-host admission. A host spelled two ways counts as two (a looser limit, never a
    /// wrong answer).
    static func originEnd(of urlString: String) -> String.Index {
        let utf8 = urlString.utf8
        guard let colon = utf8.firstIndex(of: UInt8(ascii: ":")) else { return utf8.endIndex }
        var index = utf8.index(after: colon)
        while index != utf8.endIndex, utf8[index] == UInt8(ascii: "/") { index = utf8.index(after: index) }
        while index != utf8.endIndex {
            let byte = utf8[index]
            if byte == UInt8(ascii: "/") || byte == UInt8(ascii: "?") || byte == UInt8(ascii: "#") { break }
            index = utf8.index(after: index)
        }
        return index
    }

    /// Header fields with duplicates merged by ", " (compared case-insensitively; the first spelling is kept), as
    /// URLSession does.
    static func merged(_ headerFields: [(name: String, value: String)]) -> [String: String] {
        var fields: [String: String] = [:]
        fields.reserveCapacity(headerFields.count)
        guard headerFields.count > 32 else {
            // A head's few fields: an earlier field of the same name is found by comparing names (ASCII case
            // folded on the bytes, Unicode's for others), not by lowercasing every name into a second dictionary.
            // ASCII names (all a valid head has) of different lengths differ: most pairs end at the length.
            let ascii = headerFields.allSatisfy { field in field.name.utf8.allSatisfy { $0 < 0x80 } }
            func same(_ lhs: String, _ rhs: String) -> Bool {
                guard ascii else { return HTTPFieldName.equal(lhs, rhs) }
                return lhs.utf8.count == rhs.utf8.count && HTTPFieldName.equal(lhs, rhs)
            }
            for (index, (name, value)) in headerFields.enumerated() {
                if let first = headerFields[..<index].first(where: { same($0.name, name) }) {
                    fields[first.name] = (fields[first.name] ?? "") + ", " + value
                } else {
                    fields[name] = value
                }
            }
            return fields
        }
        var spelling: [String: String] = [:]
        for (name, value) in headerFields {
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
    /// The handle holds the options of a plain transfer (``CurlOptions/isPlain(_:)``), all set by this engine and taken
    /// by libcurl, not reset since: the next plain transfer sets only those that differ (engine thread).
    var holdsPlainOptions = false

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
