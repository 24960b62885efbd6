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

/// A transport that drives libcurl directly: one multi handle on one thread of its own, connections kept alive and
/// HTTP/2 multiplexed, streamed bodies with backpressure, per-phase timings.
///
/// ```swift
/// let transport = CurlTransport()
/// let agent = NetworkAgent(transport: transport)
/// ```
///
/// It keeps the contract of ``/NetworkAgent/URLSessionTransport`` (same errors, same redirect policy, same
/// deadlines) and differs where libcurl allows more:
/// - bodies arrive as the server sent them: no `Accept-Encoding` is sent and nothing is decompressed (the gzip
///   plugin sees the compressed bytes, so it can bound inflation and detect truncation);
/// - a streamed body pauses the transfer when ``Configuration/streamBufferLimit`` bytes wait unread and resumes when
///   the consumer has read them, so memory stays bounded whatever the body's size; cancelling or dropping the stream
///   stops the transfer and closes its connection at once;
/// - each response carries libcurl's phase timings (`URLResponse.transferTimings`): name lookup, connect, TLS,
///   pre-transfer, first byte and, for a buffered response, total. A streamed response has them up to the first
///   byte, without the total (it is returned before the body). A phase that did not happen is `nil`: on a reused
///   connection there is no name lookup, connect or TLS handshake, and plain `http` has no TLS;
/// - TLS is verified against the system's CA store, or ``Configuration/caBundle``, with an optional pinned public
///   key; HTTP/2 is negotiated through ALPN.
///
/// `URLRequest.timeoutInterval` is the deadline of the whole exchange for ``send(_:)`` and of the response head for
/// ``stream(_:)``. Request headers go out as set, plus `Host`, libcurl's default `Accept: */*` when the request has
/// no `Accept`, and a `User-Agent` (`NetworkAgentCurl libcurl/<version>`) when it has none; `Expect: 100-continue`
/// is never added. A body in `httpBody` or a ``/NetworkAgent/FileBackedBodyStream`` is sent with its
/// `Content-Length` (and sent again on a 307/308, or when a reused connection turns out dead); another
/// `httpBodyStream` is sent chunked, once. File and stream bodies are read ahead off the engine thread, and progress
/// handlers run off it too: a body that blocks, or a handler that does, holds up only its own request.
///
/// Each transport owns its engine thread and connections; create one and keep it for the process (or as long as its
/// connections are worth keeping), and end it with ``shutdown()``: what is in flight fails with a typed error, the
/// thread ends and the connections close. A transport released without it still cleans up: what is in flight goes
/// on (a stream returned by a provider that is gone reads to its end, as with
/// ``/NetworkAgent/URLSessionTransport``); the thread ends, and its connections close, after the last transfer. A
/// debug build says on standard error (once per process) that ``shutdown()`` was not called.
public final class CurlTransport: HTTPTransport {
    /// The settings the transport was created with.
    public let configuration: Configuration
    /// The engine; `nil` when libcurl lacks a feature or could not make a multi handle. Internal for tests.
    let engine: CurlEngine?

    /// Creates a transport with its own engine thread and connections.
    ///
    /// - Parameter configuration: Connection limits, timeouts, TLS, proxy, cookies and redirects.
    public convenience init(configuration: Configuration = Configuration()) {
        self.init(configuration: configuration, hooks: CurlEngine.Hooks())
    }

    /// Creates a transport whose engine uses `hooks` (tests: faults of libcurl this machine's cannot show).
    init(configuration: Configuration, hooks: CurlEngine.Hooks) {
        self.configuration = configuration
        engine = CurlRuntime.availability == nil ? CurlEngine(configuration: configuration, hooks: hooks) : nil
    }

    deinit {
        if let engine, !engine.isClosed { Self.reportDroppedWithoutShutdown() }
        engine?.release()
    }

    /// Ends the transport: transfers in flight fail, new requests fail unsent, the engine thread ends and the
    /// connections close.
    ///
    /// A request in flight (a ``send(_:)`` waiting for its response, a ``stream(_:)`` whose body is still being read)
    /// fails at once with a ``/NetworkAgent/NetworkAgentError`` of code `transport` whose
    /// `NetworkAgentError.curlError` has the code ``Error/Code-swift.struct/shutdown``; a request made
    /// after it fails the same way without being sent. Neither is retried by the retry plugin (there is no `URLError`
    /// code). To let requests finish, await them before calling this: nothing is given a grace period.
    ///
    /// Returns once the engine thread has ended and the connections are closed; calling it again returns at once.
    /// Safe to call from any task. A transport released without it cleans up after its last transfer instead.
    public func shutdown() async {
        await engine?.shutdown()
    }

    /// Transports released without ``shutdown()`` in this process, counted in debug builds (read by tests).
    static let droppedWithoutShutdown = Locked(0)

    private static func reportDroppedWithoutShutdown() {
        #if DEBUG
        let first = droppedWithoutShutdown.withLock { count in
            count += 1
            return count == 1
        }
        guard first else { return }
        let message =
            "NetworkAgentCurl: a CurlTransport was released without `await transport.shutdown()`. It cleans up "
            + "anyway (what is in flight goes on, then its engine thread ends and its connections close), but at no "
            + "known point: call shutdown() when done with it. Reported once per process, in debug builds only.\n"
        FileHandle.standardError.write(Data(message.utf8))
        #endif
    }

    /// The number of times a streamed transfer was paused for a slow consumer so far (for tests).
    var pauseCount: Int { engine?.pauses.withLock { $0 } ?? 0 }

    /// The transfers in flight (for this package's tests: nothing is left behind after a call).
    package var activeTransferCount: Int { engine?.activeCount.withLock { $0 } ?? 0 }

    /// Sends a request, following redirects, within the request's `timeoutInterval`.
    ///
    /// - Parameter request: The request to send.
    /// - Returns: The body and the final response, whatever its status code.
    /// - Throws: ``/NetworkAgent/NetworkAgentError``: `transport` (with the `URLError` code URLSession would give),
    ///   `timedOut`, `cancelled`, `redirectFailed`, `invalidTimeout` or `responseTooLarge`; `transport` with a
    ///   ``CurlTransport/Error`` when libcurl lacks a feature.
    public func send(_ request: URLRequest) async throws -> (data: Data, response: URLResponse) {
        let (response, outcome) = try await follow(request, streaming: false)
        return (data: outcome.data, response: response)
    }

    /// Opens a request and returns as soon as the response head arrives, following redirects.
    ///
    /// `timeoutInterval` is the deadline for the response head; the body then lasts until the server ends it or the
    /// consumer stops iterating.
    ///
    /// - Parameter request: The request to send.
    /// - Returns: The response head and its body as a stream of chunks.
    /// - Throws: What ``send(_:)`` throws; the body's iteration throws `responseTooLarge` when the body grows past
    ///   the agent's limit.
    public func stream(_ request: URLRequest) async throws -> HTTPStreamResponse {
        let (response, outcome) = try await follow(request, streaming: true)
        return HTTPStreamResponse(response: response, body: outcome.body ?? HTTPByteStream(data: outcome.data))
    }

    /// Sends `request` and each redirect the shared policy follows, within one deadline; returns the last hop.
    private func follow(
        _ request: URLRequest,
        streaming: Bool
    ) async throws -> (response: HTTPURLResponse, outcome: CurlTransfer.Outcome) {
        let engine = try readyEngine()
        let deadline = try HTTPTransportContext.timeLimit(of: request).map { ContinuousClock.now + $0 }
        let limit = HTTPTransportContext.maximumResponseBytes.map { max(0, $0) }
        let progress = HTTPTransportContext.progressHandler
        let added = HTTPTransportContext.addedResponseField
        var current = request
        var redirects = 0
        while true {
            let (response, outcome) = try await perform(
                current,
                on: engine,
                deadline: deadline,
                streaming: streaming,
                limit: limit,
                progress: progress,
                adding: added
            )
            HTTPTransportContext.reportResponseHeaders(after: outcome.timeToHeaders)
            // A streamed call's redirect error carries no body, as URLSessionTransport's.
            guard
                let next = try nextHop(
                    after: current,
                    response: response,
                    redirects: &redirects,
                    data: streaming ? nil : outcome.data
                )
            else { return (response, outcome) }
            current = next
        }
    }

    // MARK: - One hop

    private func readyEngine() throws(NetworkAgentError) -> CurlEngine {
        if let missing = CurlRuntime.availability {
            throw NetworkAgentError(.transport, missing.description, underlying: missing)
        }
        guard let engine else {
            let error = URLError(.cannotLoadFromNetwork)
            throw NetworkAgentError(.transport, "libcurl could not create a multi handle", underlying: error)
        }
        return engine
    }

    private func nextHop(
        after request: URLRequest,
        response: HTTPURLResponse,
        redirects: inout Int,
        data: Data?
    ) throws(NetworkAgentError) -> URLRequest? {
        guard configuration.maximumRedirects > 0,
            let next = try HTTPTransportContext.nextRequest(after: request, response: response)
        else { return nil }
        redirects += 1
        guard redirects <= configuration.maximumRedirects else {
            throw NetworkAgentError(
                .redirectFailed,
                "more than \(configuration.maximumRedirects) redirects",
                response: response,
                data: data
            )
        }
        return next
    }

    private func perform(
        _ request: URLRequest,
        on engine: CurlEngine,
        deadline: ContinuousClock.Instant?,
        streaming: Bool,
        limit: Int?,
        progress: TransferProgress.Handler?,
        adding added: AddedResponseField?
    ) async throws -> (HTTPURLResponse, CurlTransfer.Outcome) {
        if Task.isCancelled { throw NetworkAgentError(.cancelled, "the request was cancelled") }
        let transfer = try makeTransfer(
            request,
            deadline: deadline,
            streaming: streaming,
            limit: limit,
            progress: progress
        )
        let mode: CurlTransferState.Mode =
            streaming ? .stream(bufferLimit: configuration.streamBufferLimit) : .collect
        let outcome: CurlTransfer.Outcome
        do {
            outcome = try await withTaskCancellationHandler {
                try await withUnsafeThrowingContinuation { continuation in
                    // The continuation travels in the command: the engine thread alone touches the transfer's state.
                    // Refused once the transport is shut down: the transfer never reached the engine thread.
                    if !engine.submit(.add(transfer, mode, continuation)) {
                        continuation.resume(throwing: CurlErrors.shutdown(request: transfer.request))
                    }
                }
            } onCancel: {
                engine.submit(.stop(transfer, .cancelled))
            }
        } catch let failed as CurlTransfer.FailedAfterHeaders {
            // Reported here, in the caller's task, where the exchange's observers are.
            HTTPTransportContext.reportResponseHeaders(after: failed.timeToHeaders)
            throw failed.error
        }
        // Built here, in the caller's task, not on the engine thread that serves every request. The field asked for
        // goes on the final response only: a redirect this transport may follow (whose response can also end up in
        // a `redirectFailed` error) is built without it, and when it turns out final the asker adds the field.
        let final = !HTTPTransportContext.mayRedirect(status: outcome.head.statusCode)
        guard let response = outcome.head.makeResponse(adding: final ? added : nil) else {
            throw HTTPTransportContext.error(for: URLError(.badServerResponse), request: request)
        }
        if final, let added { added.receipt.record(response) }
        return (response, outcome)
    }

    private func makeTransfer(
        _ request: URLRequest,
        deadline: ContinuousClock.Instant?,
        streaming: Bool,
        limit: Int?,
        progress: TransferProgress.Handler?
    ) throws(NetworkAgentError) -> CurlTransfer {
        guard let url = request.url, let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https"
        else {
            throw HTTPTransportContext.error(for: URLError(.unsupportedURL), request: request)
        }
        var timeoutMilliseconds = 0
        var headDeadline: UInt64?
        if let deadline {
            let remaining = ContinuousClock.now.duration(to: deadline)
            guard remaining > .zero else { throw HTTPTransportContext.timedOut(request) }
            if streaming {
                let nanoseconds = UInt64(clamping: remaining.components.seconds) &* 1_000_000_000
                headDeadline =
                    DispatchTime.now().uptimeNanoseconds &+ nanoseconds
                    &+ UInt64(remaining.components.attoseconds / 1_000_000_000)
            } else {
                timeoutMilliseconds = CurlOptions.milliseconds(remaining)
            }
        }
        var sent = request
        // Each change copies Foundation's request: only the ones that change something are made (a plain GET: none).
        // The sensitive-header mark stays on the transfer's request (read for its URL and messages only): the
        // transfer leaves it out of the header list it hands libcurl.
        // The transfer keeps its body as `body` below; without the request's copy, a self-deleting file body
        // (FileBackedBodyStream) goes away with the caller's last reference, not when the engine thread lets go.
        if request.httpBodyStream != nil { sent.httpBodyStream = nil }
        if request.httpBody != nil { sent.httpBody = nil }
        return CurlTransfer(
            request: sent,
            url: url,
            body: try Self.body(of: request),
            timeoutMilliseconds: timeoutMilliseconds,
            headDeadline: headDeadline,
            maximumResponseBytes: limit,
            progressHandler: progress
        )
    }

    private static func body(of request: URLRequest) throws(NetworkAgentError) -> CurlTransfer.Body {
        let method = request.httpMethod?.uppercased() ?? "GET"
        guard method != "GET" && method != "HEAD" else { return .none }
        if let file = request.httpBodyStream as? FileBackedBodyStream {
            let fd = open(file.fileURL.path, O_RDONLY | O_CLOEXEC)
            var status = stat()
            guard fd >= 0, fstat(fd, &status) == 0 else {
                if fd >= 0 { close(fd) }
                throw NetworkAgentError(
                    .encoding,
                    "the request body file \(file.fileURL.path) cannot be read (errno \(errno))"
                )
            }
            return .reader(CurlBodyReader(.file(fd: fd, size: Int(status.st_size))))
        }
        if let stream = request.httpBodyStream { return .reader(CurlBodyReader(.stream(stream))) }
        if let data = request.httpBody, !data.isEmpty { return .data(data) }
        return .none
    }
}
