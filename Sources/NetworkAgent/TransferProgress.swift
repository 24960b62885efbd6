/// How far a request's upload and download have come.
///
/// Delivered to the `progress` handler of ``NetworkAgentProvider/request(endpoint:progress:)`` and
/// ``NetworkAgentProvider/stream(endpoint:progress:)``: upload progress as the transport reports body bytes sent,
/// download progress as body bytes arrive (counted by the transport, since FoundationNetworking's own counters
/// stay at zero on Linux). A retried or redirected request starts again from zero. Side requests that plugins make
/// through the agent (a token refresh) report to it only the handler they are given
/// (``NetworkAgent/request(_:progress:)``, ``NetworkAgent/send(_:progress:)``), never the call's.
public struct TransferProgress: Sendable, Hashable {
    /// Receives progress; called on the transport's delegate queue, so keep it short and thread-safe.
    public typealias Handler = @Sendable (TransferProgress) -> Void

    /// Request body bytes sent so far.
    public var bytesSent = 0
    /// The request body's size, when known.
    public var totalBytesExpectedToSend: Int?
    /// Response body bytes received so far (after the transport's own content decoding).
    public var bytesReceived = 0
    /// The response's `Content-Length`, when the server sent one. With a compressed response this is the
    /// compressed size, so ``bytesReceived`` may exceed it.
    public var totalBytesExpectedToReceive: Int?

    /// Creates a progress value with nothing sent or received yet: what a transport starts from before it reports
    /// to ``HTTPTransportContext/progressHandler``.
    public init() {}

    /// The progress handler of the current call; read by the transport when it starts a task. The agent's side-request
    /// methods set it to their own handler (or `nil`) so that they never report to the call they are made in.
    static var handler: Handler? { current.handler }

    /// Runs `operation` with `handler` as the current call's progress handler.
    static func withHandler<Result>(
        _ handler: Handler?,
        operation: () async throws -> Result
    ) async rethrows -> Result {
        try await $current.withValue(Slot(handler: handler), operation: operation)
    }

    /// The task-local carrier of ``handler``. A struct, not the optional closure itself: on Swift 6.3.1 a `@TaskLocal`
    /// whose value is an optional `@Sendable` closure crashes optimised builds in `swift_task_localValuePush` when it
    /// is bound with `withValue` (Docs/LinuxNotes.md); a struct wrapping the same closure does not.
    private struct Slot: Sendable {
        var handler: Handler?
    }

    @TaskLocal private static var current = Slot()
}
