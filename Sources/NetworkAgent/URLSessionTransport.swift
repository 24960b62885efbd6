import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The default transport: URLSession, hardened for FoundationNetworking on Linux.
///
/// What it does about the platform (each has a test against the loopback server):
/// - cancels HTTP authentication challenges (Basic, Digest, NTLM, Negotiate…) and returns the 401 as a normal
///   response (FoundationNetworking hangs forever on `WWW-Authenticate: Basic`); auth is done with headers. Server
///   trust and client certificate challenges (Apple platforms) get the system's default handling;
/// - follows redirects itself: 301/302 turn a `POST` into a `GET` and 303 anything but `HEAD` into a `GET`,
///   307/308 keep the method and the body, and `Authorization`, `Cookie`, `Proxy-Authorization` and the headers
///   the request marks sensitive (`URLRequest.sensitiveHeaderNames`) are removed when a hop leaves the origin
///   (an `https` to `http` downgrade included); the mark itself is never sent;
/// - enforces `URLRequest.timeoutInterval` as the deadline of the whole exchange, sub-second values included; an
///   infinite one, or one of 10⁹ seconds (about 31.7 years) or more, means no deadline, and a negative or NaN one fails with
///   ``NetworkAgentError/Code/invalidTimeout``;
/// - stops a transfer the moment its body grows past the calling agent's response limit
///   (``NetworkAgentConfiguration/maximumResponseBytes``, ``NetworkAgentEndpoint/maximumResponseBytes``), counted in
///   the bytes libcurl delivers after decoding, and fails with ``NetworkAgentError/Code/responseTooLarge``;
/// - maps the cancellation of the calling task to ``NetworkAgentError/Code/cancelled`` at once;
/// - reports a body cut short on the wire (fewer bytes than its `Content-Length`, compressed or not, or a chunked body
///   without its last chunk) as a lost connection, `URLError(.networkConnectionLost)`, where FoundationNetworking
///   gives `URLError.unknown`. A gzip stream that ends early inside a body whole on the wire cannot be seen: libcurl
///   inflates what arrived and reports nothing, so the call returns the shorter body;
/// - reports a body libcurl cannot decode (a `Transfer-Encoding` with a coding it does not know, or a body that does
///   not decode as its coding says) as `URLError(.cannotDecodeContentData)`, as `CurlTransport` does, where
///   FoundationNetworking gives `URLError.unknown`;
/// - uses no cookie jar and no URL cache unless a session configuration asks for them;
/// - streams bodies in a ``FileBackedBodyStream`` from their file with a `Content-Length`, on every attempt;
/// - sends a request with a body again itself when libcurl's own re-send after a reused connection died would go
///   out without it (a `Content-Length` head and no body, hanging until the deadline), and fails a one-shot
///   `httpBodyStream` body that cannot be sent twice with a `URLError(.networkConnectionLost)` transport error;
/// - streams response bodies through one session-level delegate (`bytes(for:)` does not exist on Linux).
///
/// URLSession's task metrics are never delivered on Linux, so for each attempt that received response headers (one
/// whose body then failed included) the transport emits a ``NetworkAgentEvent``
/// ``NetworkAgentEvent/Kind/responseHeaders(after:)`` (`transport.response_headers`, with the time to headers in a
/// `seconds` attribute for logs), and
/// `transport.body_resent` (with the `method`) each time it sends a request again because its body was lost.
public final class URLSessionTransport: HTTPTransport {
    /// The transport behind `NetworkAgent()`: the default configuration, created on first use.
    public static let shared = URLSessionTransport()

    /// The default number of redirects followed before failing with ``NetworkAgentError/Code/redirectFailed``.
    public static let defaultMaximumRedirects = 10

    private let session: URLSession
    private let delegate: SessionDelegate
    /// The most redirects followed for one request; `0` returns 3xx responses to the caller.
    package let maximumRedirects: Int

    /// How many times one hop of a request is sent again after libcurl's re-send lost its body. Each time means one
    /// more reused keep-alive connection that died before answering, which libcurl checks for before reusing one,
    /// so more than one in a row is rare.
    static let maximumLostBodyResends = 3

    /// The shortest `URLRequest.timeoutInterval`, in seconds, that means no deadline at all: 10⁹ s, about 31.7
    /// years. An infinite interval means none too. Every conversion of an interval below it, to nanoseconds for the
    /// deadline's timer and to milliseconds inside FoundationNetworking, fits in 64 bits.
    package static let longestTimeout: TimeInterval = 1e9

    /// The default most bytes of a streamed body that may wait unread (the initializer's `streamBufferLimit`): 64 MiB.
    public static let defaultStreamBufferLimit = 64 << 20

    /// The most bytes of a streamed body that may wait unread before the stream fails with
    /// ``NetworkAgentError/Code/streamOverflow`` (FoundationNetworking cannot pause a download).
    package let streamBufferLimit: Int

    /// A session configuration without cookie jar or URL cache (FoundationNetworking's shared jar is a file that
    /// every binary in a build folder shares across runs).
    ///
    /// - Returns: An ephemeral configuration with no cookie storage, no URL cache and cookies neither sent nor
    ///   accepted.
    public static func defaultSessionConfiguration() -> URLSessionConfiguration {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpCookieStorage = nil
        configuration.httpShouldSetCookies = false
        configuration.httpCookieAcceptPolicy = .never
        configuration.urlCache = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        return configuration
    }

    /// Creates a transport with its own URLSession.
    ///
    /// - Parameters:
    ///   - configuration: The session configuration. Pass one with an `HTTPCookieStorage` to opt in to cookies.
    ///   - maximumRedirects: The most redirects followed for one request; `0` returns 3xx responses to the caller.
    ///   - streamBufferLimit: The most bytes of a streamed body that may wait unread before the stream fails with
    ///     ``NetworkAgentError/Code/streamOverflow`` (FoundationNetworking cannot pause a download).
    public init(
        configuration: URLSessionConfiguration = URLSessionTransport.defaultSessionConfiguration(),
        maximumRedirects: Int = URLSessionTransport.defaultMaximumRedirects,
        streamBufferLimit: Int = URLSessionTransport.defaultStreamBufferLimit
    ) {
        let delegate = SessionDelegate()
        self.delegate = delegate
        self.session = URLSession(configuration: configuration, delegate: delegate, delegateQueue: nil)
        self.maximumRedirects = max(0, maximumRedirects)
        self.streamBufferLimit = max(1, streamBufferLimit)
    }

    deinit {
        session.finishTasksAndInvalidate()
    }

    /// Tasks started and not yet completed.
    package var activeTaskCount: Int { delegate.activeTaskCount }

    /// Sends a request, following redirects, within the request's `timeoutInterval`.
    ///
    /// - Parameter request: The request to send.
    /// - Returns: The body and the final response, whatever its status code.
    /// - Throws: ``NetworkAgentError``: `transport`, `timedOut`, `cancelled`, `redirectFailed`, `invalidTimeout` or
    ///   `responseTooLarge`.
    public func send(_ request: URLRequest) async throws -> (data: Data, response: URLResponse) {
        let deadline = try HTTPTransportContext.timeLimit(of: request).map { ContinuousClock.now + $0 }
        var current = request
        var redirects = 0
        while true {
            let (data, response) = try await perform(current, deadline: deadline)
            guard let http = response as? HTTPURLResponse,
                let next = try nextHop(after: current, response: http, redirects: &redirects, data: data)
            else {
                return (data: data, response: response)
            }
            current = next
        }
    }

    /// Opens a request and returns as soon as the response headers arrive, following redirects.
    ///
    /// `timeoutInterval` is the deadline for the response headers; the body then lasts until the server ends it
    /// or the consumer stops iterating.
    ///
    /// - Parameter request: The request to send.
    /// - Returns: The response head and its body as a stream of chunks.
    /// - Throws: ``NetworkAgentError``: `transport`, `timedOut`, `cancelled`, `redirectFailed`, `invalidResponse` or
    ///   `invalidTimeout`; the body's iteration throws `responseTooLarge` when the body grows past the agent's limit.
    public func stream(_ request: URLRequest) async throws -> HTTPStreamResponse {
        let deadline = try HTTPTransportContext.timeLimit(of: request).map { ContinuousClock.now + $0 }
        var current = request
        var redirects = 0
        while true {
            let (opened, buffer) = try await open(current, deadline: deadline)
            guard let next = try nextHop(after: current, response: opened.response, redirects: &redirects, data: nil)
            else {
                return opened
            }
            buffer.cancel()
            current = next
        }
    }

    private func nextHop(
        after request: URLRequest,
        response: HTTPURLResponse,
        redirects: inout Int,
        data: Data?
    )
        throws(NetworkAgentError) -> URLRequest?
    {
        guard maximumRedirects > 0, let next = try HTTPTransportContext.nextRequest(after: request, response: response)
        else { return nil }
        redirects += 1
        guard redirects <= maximumRedirects else {
            throw NetworkAgentError(
                .redirectFailed,
                "more than \(maximumRedirects) redirects",
                response: response,
                data: data
            )
        }
        return next
    }

    /// The request to hand URLSession and the task for it: file-backed bodies go through `uploadTask(fromFile:)`.
    private func makeTask(
        _ request: URLRequest,
        deadline: ContinuousClock.Instant?
    ) throws(NetworkAgentError)
        -> URLSessionTask
    {
        var sent = request
        sent.sensitiveHeaderNames = []
        if let deadline {
            let remaining = ContinuousClock.now.duration(to: deadline)
            guard remaining > .zero else { throw HTTPTransportContext.timedOut(request) }
            // libcurl's timeout is an idle timeout in whole seconds that fails sub-second values at once: keep it
            // past our own deadline so that the deadline below is the one that fires.
            sent.timeoutInterval = (remaining.timeInterval + 1).rounded(.up)
        } else {
            // No deadline; FoundationNetworking converts the interval to integer milliseconds, which infinity traps.
            sent.timeoutInterval = Self.longestTimeout
        }
        if let body = request.httpBodyStream as? FileBackedBodyStream {
            sent.httpBodyStream = nil
            return session.uploadTask(with: sent, fromFile: body.fileURL)
        }
        return session.dataTask(with: sent)
    }

    /// Cancels `task` at `deadline`, marking it timed out. The timer is a Dispatch timer, not a Swift task, so a
    /// deadline fires even while an app keeps every thread of the concurrency pool busy; cancelling it releases the
    /// task at once (a cancelled `asyncAfter` work item would hold it until its deadline). No deadline, no timer.
    private func startTimer(
        for task: URLSessionTask,
        deadline: ContinuousClock.Instant?
    ) -> (any DispatchSourceTimer)? {
        guard let deadline else { return nil }
        let timer = DispatchSource.makeTimerSource(queue: DispatchQueue.global())
        let nanoseconds = max(0, ContinuousClock.now.duration(to: deadline).nanoseconds)
        timer.schedule(deadline: .now() + .nanoseconds(nanoseconds), leeway: .milliseconds(1))
        timer.setEventHandler { [delegate] in
            delegate.markTimedOut(task.taskIdentifier)
            task.cancel()
        }
        timer.resume()
        return timer
    }

    /// Registers `task` with the sink `makeSink` builds and resumes it, so that cancelling the calling task cancels
    /// `task`. A task already cancelled is never resumed: the call ends at once with
    /// ``NetworkAgentError/Code/cancelled``.
    ///
    /// A collected exchange that fails after its response headers arrived reports its time to headers from `started`
    /// before the error is thrown, as a successful one does: once per hop that received headers.
    private func cancellable<T: Sendable>(
        _ task: URLSessionTask,
        request: URLRequest,
        progress: TransferProgress.Handler?,
        started: ContinuousClock.Instant,
        _ makeSink: (CheckedContinuation<T, any Error>) -> SessionDelegate.Sink
    ) async throws -> T {
        let id = task.taskIdentifier
        // Known to the delegate before any cancellation can arrive, so that a cancellation is never lost.
        delegate.prepare(
            id,
            body: RequestBody(of: request),
            progress: progress,
            maximumResponseBytes: NetworkAgent.maximumResponseBytes
        )
        do {
            return try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { continuation in
                    if delegate.attach(id, sink: makeSink(continuation)) {
                        task.resume()
                    } else {
                        continuation.resume(throwing: SessionDelegate.Failure.cancelled)
                    }
                }
            } onCancel: { [delegate] in
                delegate.markCancelled(id)
                task.cancel()
            }
        } catch let failed as SessionDelegate.FailedAfterHeaders {
            HTTPTransportContext.reportResponseHeaders(after: started.duration(to: failed.headersReceived))
            throw Self.map(failed.failure, request: request)
        } catch SessionDelegate.Failure.bodyLost {
            throw LostBody()
        } catch let failure as SessionDelegate.Failure {
            throw Self.map(failure, request: request)
        }
    }

    /// Thrown by an attempt that was stopped because libcurl's re-send would have gone out without the body.
    private struct LostBody: Error {}

    /// Runs `attempt`, and again with a new task when libcurl lost the body re-sending it (at most
    /// ``maximumLostBodyResends`` times, within the same deadline). libcurl re-sends only when a reused connection
    /// died before any byte of a response, as it does for requests without a body; this completes that re-send.
    private func resendingLostBodies<T>(_ request: URLRequest, _ attempt: () async throws -> T) async throws -> T {
        var resends = 0
        while true {
            do {
                return try await attempt()
            } catch is LostBody {
                guard RequestBody(of: request).canBeSentAgain, resends < Self.maximumLostBodyResends else {
                    throw Self.map(.bodyLost, request: request)
                }
                resends += 1
                Self.reportResend(of: request)
            }
        }
    }

    private static func reportResend(of request: URLRequest) {
        guard NetworkAgentEvents.hasObservers else { return }
        NetworkAgentEvents.emit(
            NetworkAgentEvent(
                source: "transport",
                name: "body_resent",
                attributes: ["method": request.httpMethod ?? "GET"]
            )
        )
    }

    private func perform(_ request: URLRequest, deadline: ContinuousClock.Instant?) async throws -> (Data, URLResponse)
    {
        try await resendingLostBodies(request) { try await performOnce(request, deadline: deadline) }
    }

    private func performOnce(
        _ request: URLRequest,
        deadline: ContinuousClock.Instant?
    ) async throws
        -> (Data, URLResponse)
    {
        let task = try makeTask(request, deadline: deadline)
        let timer = startTimer(for: task, deadline: deadline)
        defer { timer?.cancel() }
        let started = ContinuousClock.now
        let completion: SessionDelegate.Completion = try await cancellable(
            task,
            request: request,
            progress: TransferProgress.handler,
            started: started
        ) { .collect($0) }
        if let headersReceived = completion.headersReceived {
            HTTPTransportContext.reportResponseHeaders(after: started.duration(to: headersReceived))
        }
        return (completion.data, completion.response)
    }

    private func open(
        _ request: URLRequest,
        deadline: ContinuousClock.Instant?
    ) async throws
        -> (HTTPStreamResponse, ChunkBuffer)
    {
        try await resendingLostBodies(request) { try await openOnce(request, deadline: deadline) }
    }

    private func openOnce(
        _ request: URLRequest,
        deadline: ContinuousClock.Instant?
    ) async throws
        -> (HTTPStreamResponse, ChunkBuffer)
    {
        let task = try makeTask(request, deadline: deadline)
        let timer = startTimer(for: task, deadline: deadline)
        defer { timer?.cancel() }
        let started = ContinuousClock.now
        let buffer = ChunkBuffer(limit: streamBufferLimit, cancelProducer: { task.cancel() })
        let response: URLResponse = try await cancellable(
            task,
            request: request,
            progress: TransferProgress.handler,
            started: started
        ) { .stream(headers: $0, chunks: buffer) }
        HTTPTransportContext.reportResponseHeaders(after: started.duration(to: .now))
        guard let http = response as? HTTPURLResponse else {
            buffer.cancel()
            throw NetworkAgentError(.invalidResponse, "\(request.url?.absoluteString ?? "?") gave no HTTP response")
        }
        return (HTTPStreamResponse(response: http, body: HTTPByteStream(buffer: buffer)), buffer)
    }

    /// Maps how a task failed to ``NetworkAgentError``.
    static func map(_ failure: SessionDelegate.Failure, request: URLRequest?) -> NetworkAgentError {
        switch failure {
        case .timedOut: HTTPTransportContext.timedOut(request)
        case .cancelled: NetworkAgentError(.cancelled, "the request was cancelled")
        case .bodyLost:
            NetworkAgentError(
                .transport,
                "\(request?.url?.absoluteString ?? "the server"): the connection closed before a response and the "
                    + "request body could not be sent again",
                underlying: URLError(.networkConnectionLost)
            )
        case .responseTooLarge(let limit, let response):
            HTTPTransportContext.responseTooLarge(limit: limit, request: request, response: response)
        case .error(let error): map(error, request: request)
        }
    }

    /// Maps a `URLError` (or any error from URLSession) to ``NetworkAgentError``.
    ///
    /// A body that ended before its framing said it would (fewer bytes than its `Content-Length` on the wire, or a
    /// chunked body without its last chunk) is a lost connection, `URLError(.networkConnectionLost)`, as
    /// `CurlTransport` and Apple's URLSession report it, so that the retry plugin classifies it the same.
    static func map(_ error: any Error, request: URLRequest?) -> NetworkAgentError {
        guard let urlError = error as? URLError else { return HTTPTransportContext.error(for: error, request: request) }
        if isBodyCutShort(urlError) {
            let lost = URLError(.networkConnectionLost, userInfo: urlError.userInfo)
            return HTTPTransportContext.error(for: lost, request: request)
        }
        if isUndecodable(urlError) {
            let undecodable = URLError(.cannotDecodeContentData, userInfo: urlError.userInfo)
            return HTTPTransportContext.error(for: undecodable, request: request)
        }
        return HTTPTransportContext.error(for: urlError, request: request)
    }

    /// Whether FoundationNetworking failed a task because libcurl could not decode its body
    /// (`CURLE_BAD_CONTENT_ENCODING`): a coding it does not know ("Unrecognized content encoding type…", an unknown
    /// `Transfer-Encoding` such as `foo`), or bytes that do not decode as their coding says ("Error while processing
    /// content unencoding…"). FoundationNetworking reports either as `URLError.unknown` (-1) with libcurl's message
    /// (measured with libcurl 7.88.1).
    static func isUndecodable(_ error: URLError) -> Bool {
        guard error.code == .unknown else { return false }
        let message = error.localizedDescription
        return message.hasPrefix("Unrecognized content encoding type")
            || message.hasPrefix("Error while processing content unencoding")
    }

    /// Whether FoundationNetworking failed a task because its body was cut short on the wire.
    ///
    /// libcurl compares the bytes that arrived, before it decodes a compressed body, with the `Content-Length` (or
    /// waits for the last chunk) and fails with `CURLE_PARTIAL_FILE`; FoundationNetworking reports that as
    /// `URLError.unknown` (-1) whose description is libcurl's message, "transfer closed with N bytes remaining to
    /// read" or "transfer closed with outstanding read data remaining" (measured with libcurl 7.88.1), and gives no
    /// other sign of it: `countOfBytesReceived` stays 0 and the delegate sees only decoded bytes.
    static func isBodyCutShort(_ error: URLError) -> Bool {
        error.code == .unknown && error.localizedDescription.hasPrefix("transfer closed with")
    }
}
