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

/// The statuses whose response the transport follows: their body is collected (a redirect's body is small and
/// never handed on), so that a streamed hop that redirects keeps its connection.
private let redirectStatuses: Set<Int> = [301, 302, 303, 307, 308]

extension CurlTransfer {
    /// Body bytes of the response; returns what libcurl must be told (the length, 0 to fail, or a pause).
    func receiveBody(_ bytes: UnsafeRawBufferPointer) -> Int {
        if !headersDone {
            headersDone = true
            timeToHeaders = started.duration(to: .now)
        }
        if !headDelivered, case .stream = sink { deliverHead() }
        if let limit = maximumResponseBytes, received + bytes.count > limit {
            stop = .responseTooLarge(limit: limit)
            return 0
        }
        if let writer {
            if pauseNext {
                pauseNext = false
                paused = true
                engine?.pauses.withLock { $0 += 1 }
                return Int(CURL_WRITEFUNC_PAUSE)
            }
            guard !writer.isTerminated else {
                stop = .consumerGone
                return 0
            }
            received += bytes.count
            if !writer.write(Data(bytes)) { pauseNext = true }
        } else {
            received += bytes.count
            data.append(bytes.bindMemory(to: UInt8.self))
        }
        if progressHandler != nil {
            progress.bytesReceived = received
            reportProgressNow()
        }
        return bytes.count
    }

    /// Called when the head of a streamed response is complete: resumes the caller with the head and a body stream,
    /// except for a redirect, whose body is collected.
    func deliverHead() {
        guard case .stream(let continuation, let bufferLimit) = sink, let easy else { return }
        if redirectStatuses.contains(statusCode) { return }
        if timeToHeaders == .zero { timeToHeaders = started.duration(to: .now) }
        guard statusCode > 0 else { return }
        let timings = CurlOptions.timings(of: easy.pointer, complete: false)
        headDelivered = true
        headTimings = timings
        sink = nil
        weak let engine = self.engine
        let (stream, writer) = HTTPByteStream.makeStream(
            bufferLimit: bufferLimit,
            onDemand: { [weak self] in
                guard let self else { return }
                engine?.submit(.unpause(self))
            },
            onTermination: { [weak self] in
                guard let self else { return }
                engine?.submit(.stop(self, .consumerGone))
            }
        )
        self.writer = writer
        continuation.resume(
            returning: Outcome(head: head(timings: timings), data: Data(), body: stream, timeToHeaders: timeToHeaders)
        )
    }

    /// Ends the call: resumes the caller, or ends the body stream it already has.
    func settle(error: NetworkAgentError?) {
        if let writer {
            self.writer = nil
            if let error { writer.finish(throwing: error) } else { writer.finish() }
            return
        }
        let continuation: CheckedContinuation<Outcome, any Error>
        let streamed: Bool
        switch sink {
        case .collect(let waiting): (continuation, streamed) = (waiting, false)
        case .stream(let waiting, _): (continuation, streamed) = (waiting, true)
        case nil: return
        }
        sink = nil
        if let error {
            // A head that arrived counts for the time to headers even when its body then failed.
            let failure: any Error =
                headersDone && timeToHeaders > .zero
                ? FailedAfterHeaders(error: error, timeToHeaders: timeToHeaders) : error
            continuation.resume(throwing: failure)
            return
        }
        if timeToHeaders == .zero { timeToHeaders = started.duration(to: .now) }
        guard statusCode > 0 else {
            continuation.resume(
                throwing: HTTPTransportContext.error(for: URLError(.badServerResponse), request: request)
            )
            return
        }
        let body = streamed ? HTTPByteStream(data: data) : nil
        continuation.resume(
            returning: Outcome(head: head(timings: timings), data: data, body: body, timeToHeaders: timeToHeaders)
        )
    }

    func head(timings: HTTPTransferTimings?) -> Head {
        Head(url: url, statusCode: statusCode, httpVersion: httpVersion, fields: responseHeaders, timings: timings)
    }

    /// The response built here, on the engine thread: for an error that carries it (rare).
    func makeResponse() -> HTTPURLResponse? {
        head(timings: headDelivered ? headTimings : nil).makeResponse()
    }

    // MARK: - Request body

    /// Fills libcurl's buffer with the next bytes of the body; 0 at its end.
    func readBody(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return 0 }
        switch body {
        case .none:
            return 0
        case .data(let data):
            let count = min(buffer.count, data.count - bodyOffset)
            guard count > 0 else { return 0 }
            let start = data.startIndex + bodyOffset
            data.copyBytes(to: base.assumingMemoryBound(to: UInt8.self), from: start..<(start + count))
            bodyOffset += count
            return count
        case .file(let fd, _):
            let count = pread(fd, base, buffer.count, off_t(bodyOffset))
            guard count >= 0 else {
                bodyReadFailed = true
                return Int(CURL_READFUNC_ABORT)
            }
            bodyOffset += count
            return count
        case .stream(let stream):
            if !streamOpened {
                streamOpened = true
                stream.open()
            }
            let count = stream.read(base.assumingMemoryBound(to: UInt8.self), maxLength: buffer.count)
            guard count >= 0 else {
                bodyReadFailed = true
                return Int(CURL_READFUNC_ABORT)
            }
            return count
        }
    }

    /// Rewinds the body for libcurl, which sends a request again on a fresh connection when a reused one died
    /// before answering: possible for in-memory and file bodies, not for a one-shot stream.
    func seekBody(to offset: Int) -> Bool {
        switch body {
        case .none: return offset == 0
        case .data(let data):
            guard offset >= 0, offset <= data.count else { return false }
            bodyOffset = offset
            return true
        case .file(_, let size):
            guard offset >= 0, offset <= size else { return false }
            bodyOffset = offset
            return true
        case .stream: return false
        }
    }

    // MARK: - Progress

    func reportProgress(downloadTotal: Int, downloaded: Int, uploadTotal: Int, uploaded: Int) {
        var next = progress
        next.bytesSent = uploaded
        next.totalBytesExpectedToSend = uploadTotal > 0 ? uploadTotal : next.totalBytesExpectedToSend
        next.totalBytesExpectedToReceive = downloadTotal > 0 ? downloadTotal : next.totalBytesExpectedToReceive
        next.bytesReceived = received
        guard next != progress else { return }
        progress = next
        reportProgressNow()
    }

    private func reportProgressNow() {
        guard let progressHandler, progress != lastReported else { return }
        lastReported = progress
        progressHandler(progress)
    }
}
