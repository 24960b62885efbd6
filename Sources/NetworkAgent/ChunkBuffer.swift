import Foundation

/// The bounded queue between a streaming task's delegate callbacks and the consumer of its body.
///
/// FoundationNetworking cannot pause a transfer (`URLSessionTask.suspend()` does not stop libcurl from reading, as
/// measured here), so the queue is bounded instead: when more than `limit` bytes wait unread, the stream fails with
/// ``NetworkAgentError/Code/streamOverflow`` and the task is cancelled. Memory stays bounded by the limit.
final class ChunkBuffer: Sendable {
    /// The most bytes that may wait unread.
    let limit: Int

    private struct State {
        var chunks: [Data] = []
        var head = 0
        var bufferedBytes = 0
        var finished = false
        var failure: (any Error)?
        var waiter: CheckedContinuation<Data?, any Error>?
    }

    private let state = Locked(State())
    private let cancelProducer: @Sendable () -> Void

    /// - Parameters:
    ///   - limit: The most bytes that may wait unread.
    ///   - cancelProducer: Cancels the task because the consumer went away or fell too far behind.
    init(limit: Int, cancelProducer: @escaping @Sendable () -> Void) {
        self.limit = limit
        self.cancelProducer = cancelProducer
    }

    /// Adds a chunk, or fails the stream when the consumer has fallen more than ``limit`` bytes behind.
    func append(_ data: Data) {
        let (waiter, overflow) = state.withLock { state -> (CheckedContinuation<Data?, any Error>?, Bool) in
            guard !state.finished else { return (nil, false) }
            if let waiter = state.waiter {
                state.waiter = nil
                return (waiter, false)
            }
            state.chunks.append(data)
            state.bufferedBytes += data.count
            return (nil, state.bufferedBytes > limit)
        }
        waiter?.resume(returning: data)
        if overflow {
            drop()
            cancelProducer()
            finish(
                throwing: NetworkAgentError(
                    .streamOverflow,
                    "more than \(limit) bytes of the streamed body waited unread; read faster or raise the limit"
                )
            )
        }
    }

    private func drop() {
        state.withLock { state in
            state.chunks = []
            state.head = 0
            state.bufferedBytes = 0
        }
    }

    /// Ends the body, with an error or normally. Later calls are ignored.
    func finish(throwing error: (any Error)?) {
        let waiter = state.withLock { state -> CheckedContinuation<Data?, any Error>? in
            guard !state.finished else { return nil }
            state.finished = true
            state.failure = error
            defer { state.waiter = nil }
            return state.waiter
        }
        if let error { waiter?.resume(throwing: error) } else { waiter?.resume(returning: nil) }
    }

    /// The consumer is gone: cancel the task (a no-op once it completed) and drop what is buffered.
    func cancel() {
        drop()
        cancelProducer()
        finish(throwing: NetworkAgentError(.cancelled, "the stream was cancelled"))
    }

    /// The next chunk, or `nil` at the end of the body.
    func next() async throws -> Data? {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                enum Action {
                    case deliver(Data?)
                    case fail(any Error)
                    case wait
                }
                let action = state.withLock { state -> Action in
                    if state.head < state.chunks.count {
                        let chunk = state.chunks[state.head]
                        state.head += 1
                        state.bufferedBytes -= chunk.count
                        if state.head == state.chunks.count {
                            state.chunks.removeAll(keepingCapacity: true)
                            state.head = 0
                        }
                        return .deliver(chunk)
                    }
                    if state.finished {
                        if let failure = state.failure { return .fail(failure) }
                        return .deliver(nil)
                    }
                    state.waiter = continuation
                    return .wait
                }
                switch action {
                case .deliver(let chunk):
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
}
