import Foundation

/// The bounded queue between a streaming task's delegate callbacks and the consumer of its body.
///
/// FoundationNetworking cannot pause a transfer (`URLSessionTask.suspend()` does not stop libcurl from reading, as
/// measured here), so the queue is bounded instead: when more than `limit` bytes wait unread, the stream fails with
/// ``NetworkAgentError/Code/streamOverflow`` and the task is cancelled. Memory stays bounded by the limit.
/// A producer that can pause (a transport given an `onDemand` handler through `HTTPByteStream.makeStream`) is told
/// to pause instead: ``append(_:)`` returns `false` once `limit` bytes wait, and `onDemand` runs when the consumer
/// has read them all.
///
/// It also counts the bytes handed to the consumer and tells the observers added with ``onEnd(_:)`` how the body
/// ended, once: read to its end, failed, or given up by the consumer.
final class ChunkBuffer: Sendable {
    /// The most bytes that may wait unread.
    let limit: Int

    private struct State {
        var chunks: [Data] = []
        var head = 0
        var bufferedBytes = 0
        var finished = false
        /// The producer was told to pause and waits for `onDemand`.
        var producerPaused = false
        var failure: (any Error)?
        var waiter: CheckedContinuation<Data?, any Error>?
        /// Bytes handed to the consumer so far.
        var delivered = 0
        /// How the body ended for the consumer, once it has.
        var end: HTTPStreamEnd?
        var endObservers: [@Sendable (HTTPStreamEnd) -> Void] = []

        /// Records the end (the first one wins) and returns the observers to call, outside the lock.
        mutating func settle(_ outcome: HTTPStreamEnd.Outcome) -> (HTTPStreamEnd, [@Sendable (HTTPStreamEnd) -> Void])?
        {
            guard end == nil else { return nil }
            let settled = HTTPStreamEnd(outcome: outcome, bytes: delivered)
            end = settled
            defer { endObservers = [] }
            return (settled, endObservers)
        }

        /// Forgets the chunks not yet read.
        mutating func dropBuffered() {
            chunks = []
            head = 0
            bufferedBytes = 0
        }
    }

    private let state = Locked(State())
    private let cancelProducer: @Sendable () -> Void
    /// Resumes a paused producer; `nil` for a producer that cannot pause (the buffer overflows instead).
    private let onDemand: (@Sendable () -> Void)?

    /// - Parameters:
    ///   - limit: The most bytes that may wait unread.
    ///   - onDemand: Resumes a producer that paused at the limit; `nil` when it cannot pause.
    ///   - cancelProducer: Cancels the task because the consumer went away or fell too far behind.
    init(limit: Int, onDemand: (@Sendable () -> Void)? = nil, cancelProducer: @escaping @Sendable () -> Void) {
        self.limit = limit
        self.onDemand = onDemand
        self.cancelProducer = cancelProducer
    }

    /// Whether the body ended (read, failed or given up).
    var isFinished: Bool { state.withLock { $0.finished } }

    /// Adds a chunk, or hands it to a waiting consumer. A producer that cannot pause fails the stream when the
    /// consumer has fallen more than ``limit`` bytes behind.
    ///
    /// - Returns: Whether the producer may go on: `false` once the body ended, or when a producer that can pause
    ///   should (``limit`` bytes wait unread; `onDemand` runs when they are read).
    @discardableResult
    func append(_ data: Data) -> Bool {
        let pauses = onDemand != nil
        let (waiter, overflow, goOn) = state.withLock {
            state -> (CheckedContinuation<Data?, any Error>?, Bool, Bool) in
            guard !state.finished else { return (nil, false, false) }
            if let waiter = state.waiter {
                state.waiter = nil
                state.delivered += data.count
                return (waiter, false, true)
            }
            state.chunks.append(data)
            state.bufferedBytes += data.count
            guard pauses else { return (nil, state.bufferedBytes > limit, true) }
            state.producerPaused = state.bufferedBytes >= limit
            return (nil, false, !state.producerPaused)
        }
        waiter?.resume(returning: data)
        if overflow {
            fail(
                NetworkAgentError(
                    .streamOverflow,
                    "more than \(limit) bytes of the streamed body waited unread; read faster or raise the limit"
                )
            )
            return false
        }
        return goOn
    }

    /// Ends the body, with an error or normally. Later calls are ignored.
    func finish(throwing error: (any Error)?) {
        let (waiter, ended) = state.withLock {
            state -> (CheckedContinuation<Data?, any Error>?, (HTTPStreamEnd, [@Sendable (HTTPStreamEnd) -> Void])?) in
            guard !state.finished else { return (nil, nil) }
            state.finished = true
            state.failure = error
            guard let waiter = state.waiter else { return (nil, nil) }
            state.waiter = nil
            return (waiter, state.settle(Self.outcome(of: error)))
        }
        Self.notify(ended)
        if let error { waiter?.resume(throwing: error) } else { waiter?.resume(returning: nil) }
    }

    /// Drops what is buffered, cancels the task and ends the body with `error` (unless it already ended).
    func fail(_ error: NetworkAgentError) {
        // A body that already ended keeps what it holds: the consumer still reads it to the end (an error body a
        // deadline fires on just after its last byte arrived must not come back cut short).
        let ended = state.withLock { state -> Bool in
            guard !state.finished else { return true }
            state.dropBuffered()
            return false
        }
        guard !ended else { return }
        // The body ends with `error` before the task is cancelled: the cancellation's own completion (which the
        // delegate may report on another thread at once) must not be the error the consumer sees.
        finish(throwing: error)
        cancelProducer()
    }

    /// The consumer is gone: cancel the task (a no-op once it completed) and drop what is buffered.
    ///
    /// A body the consumer had read to its last byte, whose transfer completed, counts as completed; anything else
    /// as cancelled.
    func cancel() {
        let ended = state.withLock { state in
            let readInFull = state.finished && state.failure == nil && state.head == state.chunks.count
            defer { state.dropBuffered() }
            return state.settle(readInFull ? .completed : .cancelled)
        }
        Self.notify(ended)
        fail(NetworkAgentError(.cancelled, "the stream was cancelled"))
    }

    /// Calls `observer` once when the body has ended for the consumer; at once if it already has.
    func onEnd(_ observer: @escaping @Sendable (HTTPStreamEnd) -> Void) {
        let ended = state.withLock { state -> HTTPStreamEnd? in
            guard let end = state.end else {
                state.endObservers.append(observer)
                return nil
            }
            return end
        }
        if let ended { observer(ended) }
    }

    /// Fails the body with `error` at `deadline` unless the returned timer is cancelled first. A Dispatch timer, so
    /// that the deadline fires even while every thread of the concurrency pool is busy.
    func expire(at deadline: ContinuousClock.Instant, with error: NetworkAgentError) -> any DispatchSourceTimer {
        let timer = DispatchSource.makeTimerSource(queue: DispatchQueue.global())
        let nanoseconds = max(0, ContinuousClock.now.duration(to: deadline).nanoseconds)
        timer.schedule(deadline: .now() + .nanoseconds(nanoseconds), leeway: .milliseconds(1))
        timer.setEventHandler { [weak self] in self?.fail(error) }
        timer.resume()
        return timer
    }

    /// The next chunk, or `nil` at the end of the body.
    func next() async throws -> Data? {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                enum Action {
                    case deliver(Data?)
                    case resumeProducer(Data)
                    case fail(any Error)
                    case wait
                }
                let (action, ended) = state.withLock {
                    state -> (Action, (HTTPStreamEnd, [@Sendable (HTTPStreamEnd) -> Void])?) in
                    if state.head < state.chunks.count {
                        let chunk = state.chunks[state.head]
                        state.head += 1
                        state.bufferedBytes -= chunk.count
                        state.delivered += chunk.count
                        if state.head == state.chunks.count {
                            state.chunks.removeAll(keepingCapacity: true)
                            state.head = 0
                            if state.producerPaused {
                                state.producerPaused = false
                                return (.resumeProducer(chunk), nil)
                            }
                        }
                        return (.deliver(chunk), nil)
                    }
                    if state.finished {
                        let ended = state.settle(Self.outcome(of: state.failure))
                        if let failure = state.failure { return (.fail(failure), ended) }
                        return (.deliver(nil), ended)
                    }
                    state.waiter = continuation
                    return (.wait, nil)
                }
                Self.notify(ended)
                switch action {
                case .deliver(let chunk):
                    continuation.resume(returning: chunk)
                case .resumeProducer(let chunk):
                    onDemand?()
                    continuation.resume(returning: chunk)
                case .fail(let error):
                    continuation.resume(throwing: error)
                case .wait:
                    break
                }
            }
        } onCancel: {
            cancel()
        }
    }

    private static func notify(_ ended: (HTTPStreamEnd, [@Sendable (HTTPStreamEnd) -> Void])?) {
        guard let (end, observers) = ended else { return }
        for observer in observers { observer(end) }
    }

    /// How a body that ended with `error` (or `nil`, normally) ended.
    private static func outcome(of error: (any Error)?) -> HTTPStreamEnd.Outcome {
        guard let error else { return .completed }
        let mapped = publicError(error)
        return mapped.code == .cancelled ? .cancelled : .failed(mapped)
    }

    /// What the consumer sees of an error the body ended with.
    static func publicError(_ error: any Error) -> NetworkAgentError {
        switch error {
        case let error as NetworkAgentError: error
        case let failure as SessionDelegate.Failure: URLSessionTransport.map(failure, request: nil)
        default: URLSessionTransport.map(error, request: nil)
        }
    }
}
