import Synchronization

/// The one delegate of a ``URLSessionTransport``'s session: collects each task's response and body by task id,
/// cancels authentication challenges, and stops URLSession from following redirects (the transport does).
final class SessionDelegate: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    // @unchecked Sendable: NSObject is not Sendable, but this class has no stored state outside the Mutex.

    /// Why a task ended without a usable response.
    enum Failure: Error {
        case timedOut
        case cancelled
        case error(any Error)
    }

    private struct TaskState {
        var continuation: CheckedContinuation<(Data, URLResponse), any Error>?
        var data = Data()
        var response: URLResponse?
        var headersReceived: ContinuousClock.Instant?
        var challengeResponse: HTTPURLResponse?
        var timedOut = false
        var cancelled = false
    }

    private let tasks = Mutex<[Int: TaskState]>([:])

    /// When the response headers of a finished task arrived, kept until ``takeHeadersReceived(_:)`` is called.
    private let headerTimes = Mutex<[Int: ContinuousClock.Instant]>([:])

    /// When the response headers of a finished task arrived, if they did; forgets it.
    func takeHeadersReceived(_ id: Int) -> ContinuousClock.Instant? {
        headerTimes.withLock { $0.removeValue(forKey: id) }
    }

    func register(_ id: Int, continuation: CheckedContinuation<(Data, URLResponse), any Error>) {
        tasks.withLock { $0[id, default: TaskState()].continuation = continuation }
    }

    func markTimedOut(_ id: Int) {
        tasks.withLock { $0[id]?.timedOut = true }
    }

    func markCancelled(_ id: Int) {
        tasks.withLock { $0[id, default: TaskState()].cancelled = true }
    }

    func urlSession(
        _ session: URLSession,
        dataTask: URLSessionDataTask,
        didReceive response: URLResponse,
        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
    ) {
        let now = ContinuousClock.now
        tasks.withLock {
            $0[dataTask.taskIdentifier]?.response = response
            $0[dataTask.taskIdentifier]?.headersReceived = now
        }
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        tasks.withLock { $0[dataTask.taskIdentifier]?.data.append(data) }
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
        let failure = challenge.failureResponse as? HTTPURLResponse
        tasks.withLock { $0[task.taskIdentifier]?.challengeResponse = failure }
        completionHandler(.cancelAuthenticationChallenge, nil)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        guard let state = tasks.withLock({ $0.removeValue(forKey: task.taskIdentifier) }),
            let continuation = state.continuation
        else { return }
        if let headersReceived = state.headersReceived {
            headerTimes.withLock { $0[task.taskIdentifier] = headersReceived }
        }
        if state.timedOut {
            continuation.resume(throwing: Failure.timedOut)
        } else if state.cancelled {
            continuation.resume(throwing: Failure.cancelled)
        } else if let challenged = state.challengeResponse {
            continuation.resume(returning: (state.data, challenged))
        } else if let error {
            continuation.resume(throwing: Failure.error(error))
        } else if let response = state.response ?? task.response {
            continuation.resume(returning: (state.data, response))
        } else {
            continuation.resume(throwing: Failure.error(URLError(.badServerResponse)))
        }
    }
}
