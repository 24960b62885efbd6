import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The one delegate of a ``URLSessionTransport``'s session: routes each task's response, body chunks and progress
/// by task id, cancels HTTP authentication challenges, stops URLSession from following redirects (the transport
/// does), and stops an attempt whose body libcurl would send again without it (see ``RequestBody``). Per-task
/// delegates are ignored by FoundationNetworking for data callbacks, hence one session delegate.
final class SessionDelegate: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    // @unchecked Sendable: NSObject is not Sendable, but this class has no stored state outside the Locked and a
    // (Sendable) dispatch queue.

    /// Why a task ended without a usable response.
    enum Failure: Error {
        case timedOut
        case cancelled
        /// A reused connection died before any response, and libcurl sent the request again on a fresh connection,
        /// which it cannot do with the body: the attempt was stopped. Whether the transport can send it again
        /// itself depends on the ``RequestBody``.
        case bodyLost
        /// The body grew past `limit` bytes and the task was cancelled; `response` is the head, when it had arrived.
        case responseTooLarge(limit: Int, response: HTTPURLResponse?)
        case error(any Error)
    }

    /// How a collected exchange failed after its response headers had arrived (a body cut short, the deadline or a
    /// cancellation during the body): the hop still counts once for the time to headers.
    struct FailedAfterHeaders: Error {
        let failure: Failure
        /// When the response headers arrived.
        let headersReceived: ContinuousClock.Instant
    }

    /// A finished collected exchange.
    struct Completion {
        let data: Data
        let response: URLResponse
        /// When the response headers arrived, if they did.
        let headersReceived: ContinuousClock.Instant?
    }

    /// Where a task's callbacks go.
    enum Sink {
        /// Collect the whole body, then resume.
        case collect(CheckedContinuation<Completion, any Error>)
        /// Resume at the response headers, then yield body chunks as they arrive.
        case stream(headers: CheckedContinuation<URLResponse, any Error>?, chunks: ChunkBuffer)
    }

    private struct TaskState {
        var sink: Sink?
        var data = Data()
        var response: URLResponse?
        var headersReceived: ContinuousClock.Instant?
        var challengeResponse: HTTPURLResponse?
        var timedOut = false
        var cancelled = false
        var body = RequestBody.none
        var bodyLost = false
        var progress: TransferProgress.Handler?
        var transferred = TransferProgress()
        /// The most body bytes accepted; `nil` for no bound.
        var maximumResponseBytes: Int?
        /// The body grew past ``maximumResponseBytes``: later chunks are dropped and the task is being cancelled.
        var tooLarge = false
    }

    private let tasks = Locked<[Int: TaskState]>([:])

    /// Where attempts that lost their body are cancelled. `cancel()` waits for the session's work queue, so it cannot
    /// run on it; a queue of its own, unlike the global one, gets a thread even when the global pool is busy.
    private let cancellations = DispatchQueue(label: "NetworkAgent.SessionDelegate.cancellations")

    /// Makes a task known before it is resumed (and before any cancellation of the caller can arrive).
    ///
    /// `maximumResponseBytes` bounds the body: the chunk that would cross it is dropped, the task cancelled, and it
    /// ends with ``Failure/responseTooLarge(limit:response:)``.
    func prepare(
        _ id: Int,
        body: RequestBody,
        progress: TransferProgress.Handler?,
        maximumResponseBytes: Int? = nil
    ) {
        let limit = maximumResponseBytes.map { max(0, $0) }
        tasks.withLock { $0[id] = TaskState(body: body, progress: progress, maximumResponseBytes: limit) }
    }

    /// Gives a prepared task its sink; returns `false`, forgetting the task, when the caller was cancelled first
    /// (the task must then not be resumed).
    func attach(_ id: Int, sink: Sink) -> Bool {
        tasks.withLock { tasks in
            guard tasks[id]?.cancelled == false else {
                tasks[id] = nil
                return false
            }
            tasks[id]?.sink = sink
            return true
        }
    }

    /// Tasks registered and not yet completed; zero when nothing is in flight (checked by the leak tests).
    var activeTaskCount: Int { tasks.withLock { $0.count } }

    func markTimedOut(_ id: Int) {
        tasks.withLock { $0[id]?.timedOut = true }
    }

    func markCancelled(_ id: Int) {
        tasks.withLock { $0[id]?.cancelled = true }
    }

    func urlSession(
        _ session: URLSession,
        dataTask: URLSessionDataTask,
        didReceive response: URLResponse,
        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
    ) {
        let now = ContinuousClock.now
        let headers = tasks.withLock { tasks -> CheckedContinuation<URLResponse, any Error>? in
            let id = dataTask.taskIdentifier
            tasks[id]?.response = response
            tasks[id]?.headersReceived = now
            let expected = response.expectedContentLength
            tasks[id]?.transferred.totalBytesExpectedToReceive = expected >= 0 ? Int(expected) : nil
            guard case .stream(let headers?, let chunks) = tasks[id]?.sink else { return nil }
            tasks[id]?.sink = .stream(headers: nil, chunks: chunks)
            return headers
        }
        headers?.resume(returning: response)
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        let id = dataTask.taskIdentifier
        // Mutated in place: copying the state out and back would copy the whole body on every chunk.
        let (chunks, progress, overLimit) = tasks.withLock {
            tasks -> (ChunkBuffer?, (TransferProgress.Handler, TransferProgress)?, Bool) in
            guard tasks[id] != nil, tasks[id]?.tooLarge == false else { return (nil, nil, false) }
            if let limit = tasks[id]?.maximumResponseBytes,
                (tasks[id]?.transferred.bytesReceived ?? 0) + data.count > limit
            {
                tasks[id]?.tooLarge = true
                return (nil, nil, true)
            }
            tasks[id]?.transferred.bytesReceived += data.count
            var chunks: ChunkBuffer?
            if case .stream(_, let buffer) = tasks[id]?.sink {
                chunks = buffer
            } else {
                tasks[id]?.data.append(data)
            }
            guard let handler = tasks[id]?.progress, let transferred = tasks[id]?.transferred else {
                return (chunks, nil, false)
            }
            return (chunks, (handler, transferred), false)
        }
        if overLimit {
            // At once, as the stream buffer's overflow does from here: libcurl would go on inflating and delivering.
            dataTask.cancel()
            return
        }
        chunks?.append(data)
        if let (handler, transferred) = progress { handler(transferred) }
    }

    func urlSession(
        _ session: URLSession,
        task: URLSessionTask,
        didSendBodyData bytesSent: Int64,
        totalBytesSent: Int64,
        totalBytesExpectedToSend: Int64
    ) {
        let progress = tasks.withLock { tasks -> (TransferProgress.Handler, TransferProgress)? in
            let id = task.taskIdentifier
            tasks[id]?.transferred.bytesSent = Int(totalBytesSent)
            tasks[id]?.transferred.totalBytesExpectedToSend =
                totalBytesExpectedToSend > 0 ? Int(totalBytesExpectedToSend) : nil
            guard let state = tasks[id], let handler = state.progress else { return nil }
            return (handler, state.transferred)
        }
        if let (handler, transferred) = progress { handler(transferred) }
    }

    func urlSession(
        _ session: URLSession,
        task: URLSessionTask,
        willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest,
        completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        completionHandler(nil)
    }

    func urlSession(
        _ session: URLSession,
        task: URLSessionTask,
        didReceive challenge: URLAuthenticationChallenge,
        completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
    ) {
        let disposition = Self.disposition(forAuthenticationMethod: challenge.protectionSpace.authenticationMethod)
        if disposition == .cancelAuthenticationChallenge {
            let failure = challenge.failureResponse as? HTTPURLResponse
            tasks.withLock { $0[task.taskIdentifier]?.challengeResponse = failure }
        }
        completionHandler(disposition, nil)
    }

    /// Authentication methods of the TLS layer, answered by the system: server trust (Apple's certificate
    /// evaluation, which cancelling would fail for every HTTPS request) and client certificates. The names are
    /// spelled out because FoundationNetworking marks its constants for them unavailable.
    static let transportLayerAuthenticationMethods: Set<String> = [
        "NSURLAuthenticationMethodServerTrust", "NSURLAuthenticationMethodClientCertificate",
    ]

    /// How a challenge of an authentication method is answered.
    ///
    /// TLS-layer methods get the default handling. Every other method is an HTTP authentication scheme (Basic,
    /// Digest, NTLM, Negotiate, HTML form, the default one, or one this code does not know) and is cancelled: auth
    /// is done with headers, and FoundationNetworking hangs forever on a Basic challenge it is asked to handle. The
    /// 401 then comes back as a normal response.
    static func disposition(forAuthenticationMethod method: String) -> URLSession.AuthChallengeDisposition {
        transportLayerAuthenticationMethods.contains(method) ? .performDefaultHandling : .cancelAuthenticationChallenge
    }

    /// Called by FoundationNetworking from inside libcurl's seek callback, on the session's work queue, when libcurl
    /// rewinds the body to send the request again on a fresh connection (a reused one died before any response).
    ///
    /// Nothing here can make that re-send carry the body: for an in-memory or file body FoundationNetworking ignores
    /// a `nil` stream (libcurl then sends the head with its `Content-Length` and no body, and waits for an answer that
    /// never comes) and stops the process on any other; a one-shot stream has been read. So the attempt is marked
    /// and ended at once, and the transport decides whether to send the request again itself.
    func urlSession(
        _ session: URLSession,
        task: URLSessionTask,
        needNewBodyStream completionHandler: @escaping @Sendable (InputStream?) -> Void
    ) {
        let body = tasks.withLock { tasks -> RequestBody? in
            guard tasks[task.taskIdentifier] != nil else { return nil }
            tasks[task.taskIdentifier]?.bodyLost = true
            return tasks[task.taskIdentifier]?.body
        }
        guard let body else {
            completionHandler(nil)
            return
        }
        switch body {
        case .oneShotStream:
            // Replaces the spent stream, so that the transfer fails at its first read instead of ending the body
            // at once with the zero-length chunk (an empty request that looks complete to the server).
            completionHandler(RequestBody.RefusingStream())
        case .none, .inMemory, .file:
            // Any stream here is a `fatalError` in FoundationNetworking (`_NativeProtocol.seekInputStream`).
            completionHandler(nil)
        }
        cancellations.async { task.cancel() }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        // A task completing before it has a sink was cancelled before it was resumed: `attach` forgets it.
        let finished = tasks.withLock { tasks -> (TaskState, Sink)? in
            guard let sink = tasks[task.taskIdentifier]?.sink,
                let state = tasks.removeValue(forKey: task.taskIdentifier)
            else { return nil }
            return (state, sink)
        }
        guard let (state, sink) = finished else { return }
        let outcome: Result<Completion, Failure>
        if state.tooLarge, let limit = state.maximumResponseBytes {
            outcome = .failure(
                .responseTooLarge(limit: limit, response: (state.response ?? task.response) as? HTTPURLResponse)
            )
        } else if state.timedOut {
            outcome = .failure(.timedOut)
        } else if state.cancelled {
            outcome = .failure(.cancelled)
        } else if state.bodyLost {
            outcome = .failure(.bodyLost)
        } else if let challenged = state.challengeResponse {
            outcome = .success(
                Completion(data: state.data, response: challenged, headersReceived: state.headersReceived)
            )
        } else if let error {
            outcome = .failure(.error(error))
        } else if let response = state.response ?? task.response {
            outcome = .success(Completion(data: state.data, response: response, headersReceived: state.headersReceived))
        } else {
            outcome = .failure(.error(URLError(.badServerResponse)))
        }
        switch (sink, outcome) {
        case (.collect(let continuation), .failure(let failure)):
            if let headersReceived = state.headersReceived {
                continuation.resume(throwing: FailedAfterHeaders(failure: failure, headersReceived: headersReceived))
            } else {
                continuation.resume(throwing: failure)
            }
        case (.collect(let continuation), .success(let completion)):
            continuation.resume(returning: completion)
        case (.stream(let headers?, let chunks), .success(let completion)):
            headers.resume(returning: completion.response)
            chunks.finish(throwing: nil)
        case (.stream(let headers?, let chunks), .failure(let failure)):
            headers.resume(throwing: failure)
            chunks.finish(throwing: failure)
        case (.stream(nil, let chunks), .success):
            chunks.finish(throwing: nil)
        case (.stream(nil, let chunks), .failure(let failure)):
            chunks.finish(throwing: failure)
        }
    }
}
