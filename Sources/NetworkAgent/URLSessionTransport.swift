/// The default transport: URLSession, hardened for FoundationNetworking on Linux.
///
/// What it does about the platform (each has a test against the loopback server):
/// - answers every authentication challenge by cancelling it and returns the 401 as a normal response
///   (FoundationNetworking hangs forever on `WWW-Authenticate: Basic`); auth is done with headers;
/// - follows redirects itself: 301/302 turn a `POST` into a `GET` and 303 anything but `HEAD` into a `GET`,
///   307/308 keep the method and the body, and `Authorization`, `Cookie` and `Proxy-Authorization` are removed
///   when a hop leaves the origin;
/// - enforces `URLRequest.timeoutInterval` as the deadline of the whole exchange, sub-second values included;
/// - maps the cancellation of the calling task to ``NetworkAgentError/Code/cancelled`` at once;
/// - uses no cookie jar and no URL cache unless a session configuration asks for them;
/// - streams bodies in a ``FileBackedBodyStream`` from their file with a `Content-Length`, on every attempt.
///
/// URLSession's task metrics are never delivered on Linux, so for each attempt that received response headers the
/// transport emits a ``NetworkAgentEvent`` `transport.response_headers` with the time to headers in `seconds`.
public final class URLSessionTransport: HTTPTransport {
    /// The transport behind `NetworkAgent()`: the default configuration, created on first use.
    public static let shared = URLSessionTransport()

    /// The default number of redirects followed before failing with ``NetworkAgentError/Code/redirectFailed``.
    public static let defaultMaximumRedirects = 10

    private let session: URLSession
    private let delegate: SessionDelegate
    /// The most redirects followed for one request; `0` returns 3xx responses to the caller.
    public let maximumRedirects: Int

    /// A session configuration without cookie jar or URL cache (FoundationNetworking's shared jar is a file that
    /// every binary in a build folder shares across runs).
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
    ///   - maximumRedirects: See ``maximumRedirects``.
    public init(
        configuration: URLSessionConfiguration = URLSessionTransport.defaultSessionConfiguration(),
        maximumRedirects: Int = URLSessionTransport.defaultMaximumRedirects
    ) {
        let delegate = SessionDelegate()
        self.delegate = delegate
        self.session = URLSession(configuration: configuration, delegate: delegate, delegateQueue: nil)
        self.maximumRedirects = max(0, maximumRedirects)
    }

    deinit {
        session.finishTasksAndInvalidate()
    }

    /// Sends a request, following redirects, within the request's `timeoutInterval`.
    ///
    /// - Parameter request: The request to send.
    /// - Returns: The body and the final response, whatever its status code.
    /// - Throws: ``NetworkAgentError``: `transport`, `timedOut`, `cancelled` or `redirectFailed`.
    public func send(_ request: URLRequest) async throws -> (data: Data, response: URLResponse) {
        let deadline = ContinuousClock.now + .seconds(request.timeoutInterval)
        var current = request
        var redirects = 0
        while true {
            let (data, response) = try await perform(current, deadline: deadline)
            guard maximumRedirects > 0, let http = response as? HTTPURLResponse,
                let next = try RedirectPolicy.nextRequest(after: current, response: http)
            else {
                return (data: data, response: response)
            }
            redirects += 1
            guard redirects <= maximumRedirects else {
                throw NetworkAgentError(
                    .redirectFailed,
                    "more than \(maximumRedirects) redirects",
                    response: http,
                    data: data
                )
            }
            current = next
        }
    }

    private func perform(_ request: URLRequest, deadline: ContinuousClock.Instant) async throws -> (Data, URLResponse) {
        let remaining = ContinuousClock.now.duration(to: deadline)
        guard remaining > .zero else { throw Self.timeoutError(request) }
        var sent = request
        // libcurl's timeout is an idle timeout in whole seconds that fails sub-second values at once: keep it
        // past our own deadline so that the deadline below is the one that fires.
        sent.timeoutInterval = (remaining.timeInterval + 1).rounded(.up)
        let task: URLSessionTask
        if let body = request.httpBodyStream as? FileBackedBodyStream {
            sent.httpBodyStream = nil
            task = session.uploadTask(with: sent, fromFile: body.fileURL)
        } else {
            task = session.dataTask(with: sent)
        }
        let id = task.taskIdentifier
        let timer = Task { [delegate] in
            try await Task.sleep(until: deadline, clock: .continuous)
            delegate.markTimedOut(id)
            task.cancel()
        }
        let started = ContinuousClock.now
        defer {
            timer.cancel()
            let headersReceived = delegate.takeHeadersReceived(id)
            if let headersReceived, NetworkAgentEvents.hasObservers {
                let seconds = started.duration(to: headersReceived).timeInterval
                NetworkAgentEvents.emit(
                    NetworkAgentEvent(
                        source: "transport",
                        name: "response_headers",
                        attributes: ["seconds": "\(seconds)"]
                    )
                )
            }
        }
        do {
            return try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { continuation in
                    delegate.register(id, continuation: continuation)
                    if Task.isCancelled {
                        delegate.markCancelled(id)
                        task.cancel()
                    }
                    task.resume()
                }
            } onCancel: { [delegate] in
                delegate.markCancelled(id)
                task.cancel()
            }
        } catch let failure as SessionDelegate.Failure {
            switch failure {
            case .timedOut: throw Self.timeoutError(request)
            case .cancelled: throw NetworkAgentError(.cancelled, "the request was cancelled")
            case .error(let error): throw Self.map(error, request: request)
            }
        }
    }

    private static func timeoutError(_ request: URLRequest) -> NetworkAgentError {
        NetworkAgentError(
            .timedOut,
            "no complete response within \(request.timeoutInterval) s from \(request.url?.absoluteString ?? "?")"
        )
    }

    /// Maps a `URLError` (or any error from URLSession) to ``NetworkAgentError``.
    static func map(_ error: any Error, request: URLRequest) -> NetworkAgentError {
        let target = request.url?.absoluteString ?? "?"
        guard let urlError = error as? URLError else {
            return NetworkAgentError(.transport, "\(target): \(error)", underlying: error)
        }
        switch urlError.code {
        case .cancelled:
            return NetworkAgentError(.cancelled, "the request was cancelled", underlying: urlError)
        case .timedOut:
            return NetworkAgentError(.timedOut, "\(target) timed out", underlying: urlError)
        default:
            return NetworkAgentError(
                .transport,
                "\(target): \(urlError.localizedDescription) (URLError \(urlError.code.rawValue))",
                underlying: urlError
            )
        }
    }
}
