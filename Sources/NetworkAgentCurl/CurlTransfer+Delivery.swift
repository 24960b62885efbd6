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

extension CurlTransfer {
    /// Feeds `event` to the state and returns the action (engine thread).
    func handle(_ event: CurlTransferState.Event) -> CurlTransferState.Action {
        state.handle(event)
    }

    /// The final head ended (its blank line, or body bytes without one): records the time to headers and hands a
    /// streamed head on.
    func headEnded() {
        // Time to headers is now, for a collected body too (not when its last byte arrives).
        if timeToHeaders == .zero { timeToHeaders = started.duration(to: .now) }
        if case .deliverHead(let bufferLimit) = handle(.headEnded(status: statusCode)) {
            deliverHead(bufferLimit: bufferLimit)
        }
    }

    /// Body bytes of the response; returns what libcurl must be told (the length, 0 to fail, or a pause).
    func receiveBody(_ bytes: UnsafeRawBufferPointer) -> Int {
        if state.awaitsHead { headEnded() }
        if let limit = maximumResponseBytes, received + bytes.count > limit {
            _ = handle(.fault(.responseTooLarge(limit: limit)))
            return 0
        }
        switch handle(.body) {
        case .collect:
            if received == 0, let easy { reserveBody(easy.pointer, first: bytes.count) }
            received += bytes.count
            data.append(bytes.bindMemory(to: UInt8.self))
        case .write:
            guard let writer, !writer.isTerminated else {
                _ = handle(.fault(.consumerGone))
                return 0
            }
            received += bytes.count
            if !writer.write(Data(bytes)) { _ = handle(.bufferFull) }
        case .pause:
            engine?.pauses.withLock { $0 += 1 }
            return Int(CURL_WRITEFUNC_PAUSE)
        default:
            return 0
        }
        if progress != nil {
            var next = reported
            next.bytesReceived = received
            report(next)
        }
        return bytes.count
    }

    /// The most room made for a collected body from its `Content-Length` before its bytes arrive.
    static let bodyReserveBound = 8 << 20

    /// Makes room for a collected body of the length its head gave (`Content-Length`, as libcurl read it), when more
    /// than its `first` bytes are to come: a body of several writes then grows once instead of by doubling, copying
    /// what came so far each time. The room is bounded (``bodyReserveBound`` and the response limit), so a length the
    /// server got wrong costs at most that much memory: the bytes are appended as they come, whatever it said.
    private func reserveBody(_ handle: UnsafeMutableRawPointer, first: Int) {
        var length: curl_off_t = -1
        guard ccurl_easy_getinfo_off_t(handle, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &length) == CURLE_OK,
            length > first
        else { return }
        let bound = min(maximumResponseBytes ?? Self.bodyReserveBound, Self.bodyReserveBound)
        data.reserveCapacity(Int(clamping: min(length, curl_off_t(bound))))
    }

    /// Resumes the caller with the head and a body stream (``CurlTransferState/Action/deliverHead(bufferLimit:)``).
    private func deliverHead(bufferLimit: Int) {
        guard let caller, let easy else { return }
        self.caller = nil
        let timings = CurlOptions.timings(of: easy.pointer, complete: false)
        headTimings = timings
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
        caller.resume(
            returning: Outcome(head: head(timings: timings), data: Data(), body: stream, timeToHeaders: timeToHeaders)
        )
    }

    /// How a call is settled: what ``settle(_:message:verifyResult:)`` does at once, or after the last progress
    /// report (a value rather than a closure: a transfer without a progress handler, most of them, allocates none).
    private enum Settlement: Sendable {
        case resume(UnsafeContinuation<Outcome, any Error>, Result<Outcome, any Error>)
        case finish(HTTPBodyWriter, throwing: (any Error)?)

        func perform() {
            switch self {
            case .resume(let caller, let result): caller.resume(with: result)
            case .finish(let writer, let error?): writer.finish(throwing: error)
            case .finish(let writer, nil): writer.finish()
            }
        }
    }

    /// Settles the call as `ending` says (``CurlTransferState/Action/end(_:)``): resumes the caller, or ends the body
    /// stream it already has. With a progress handler this runs after its last report.
    func settle(_ ending: CurlTransferState.Ending, message: String?, verifyResult: Int) {
        let settlement: Settlement
        switch ending {
        case .finishStream, .failStream:
            guard let writer else { return }
            self.writer = nil
            if case .failStream(let failure) = ending {
                let error = self.error(for: failure, message: message, verifyResult: verifyResult)
                settlement = .finish(writer, throwing: error)
            } else {
                settlement = .finish(writer, throwing: nil)
            }
        case .respond(let streamed):
            guard let caller else { return }
            self.caller = nil
            if timeToHeaders == .zero { timeToHeaders = started.duration(to: .now) }
            guard statusCode > 0 else {
                let error = HTTPTransportContext.error(for: URLError(.badServerResponse), request: request)
                settlement = .resume(caller, .failure(error))
                break
            }
            let outcome = Outcome(
                head: head(timings: timings),
                data: data,
                body: streamed ? HTTPByteStream(data: data) : nil,
                timeToHeaders: timeToHeaders
            )
            settlement = .resume(caller, .success(outcome))
        case .fail(let failure):
            guard let caller else { return }
            self.caller = nil
            let error = self.error(for: failure, message: message, verifyResult: verifyResult)
            // A head that arrived counts for the time to headers even when its body then failed.
            let thrown: any Error =
                timeToHeaders > .zero ? FailedAfterHeaders(error: error, timeToHeaders: timeToHeaders) : error
            settlement = .resume(caller, .failure(thrown))
        }
        if let progress { progress.finish { settlement.perform() } } else { settlement.perform() }
    }

    private func error(
        for failure: CurlTransferState.Failure,
        message: String?,
        verifyResult: Int
    ) -> NetworkAgentError {
        switch failure {
        case .stopped(let stop): CurlErrors.error(for: stop, transfer: self)
        case .libcurl(let code):
            CurlErrors.error(for: code, message: message, verifyResult: verifyResult, transfer: self)
        case .noResponse: HTTPTransportContext.error(for: URLError(.badServerResponse), request: request)
        }
    }

    func head(timings: HTTPTransferTimings?) -> Head {
        Head(url: url, statusCode: statusCode, httpVersion: httpVersion, fields: responseHeaders, timings: timings)
    }

    /// The response built here, on the engine thread: for an error that carries it (rare).
    func makeResponse() -> HTTPURLResponse? {
        head(timings: headTimings).makeResponse()
    }

    // MARK: - Request body

    /// Fills libcurl's buffer with the next bytes of the body; 0 at its end, or libcurl's pause or abort value.
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
        case .reader(let reader):
            switch reader.take(into: buffer) {
            case .bytes(let count): return count
            case .end: return 0
            case .empty:
                return handle(.uploadStarved) == .pause ? Int(CURL_READFUNC_PAUSE) : Int(CURL_READFUNC_ABORT)
            case .failed(let detail):
                _ = handle(.fault(.bodyUnreadable(detail)))
                return Int(CURL_READFUNC_ABORT)
            }
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
        case .reader(let reader):
            return reader.seek(to: offset)
        }
    }

    // MARK: - Progress

    func reportProgress(downloadTotal: Int, downloaded: Int, uploadTotal: Int, uploaded: Int) {
        var next = reported
        next.bytesSent = uploaded
        next.totalBytesExpectedToSend = uploadTotal > 0 ? uploadTotal : next.totalBytesExpectedToSend
        next.totalBytesExpectedToReceive = downloadTotal > 0 ? downloadTotal : next.totalBytesExpectedToReceive
        next.bytesReceived = received
        report(next)
    }

    /// Records a new progress value for the relay, which hands it to the caller's handler off this thread.
    private func report(_ next: TransferProgress) {
        guard let progress, next != reported else { return }
        reported = next
        progress.report(next)
    }
}
