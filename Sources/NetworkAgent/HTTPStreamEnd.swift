/// How the body of a streamed response ended for the caller, as told to the observers added with
/// ``NetworkAgentExchange/onStreamEnd(_:)``.
///
/// A plugin that measures or logs bodies uses it for a streamed call, whose exchange returns a 2xx response with an
/// empty body while the bytes go to the caller (see ``NetworkAgentExchange/isStreaming``).
public struct HTTPStreamEnd: Sendable {
    /// How the body ended.
    public enum Outcome: Sendable {
        /// The caller read the body to its end.
        case completed
        /// The transfer failed before the end of the body: the connection broke, the deadline passed, or the caller
        /// fell too far behind (``NetworkAgentError/Code/streamOverflow``). The caller got this error.
        case failed(NetworkAgentError)
        /// The body was given up before its end: the caller left the loop, was cancelled or dropped the body
        /// unread, or the call failed (a plugin's `onResponse` threw) before the caller got the body. The transfer
        /// was cancelled.
        case cancelled
    }

    /// How the body ended.
    public let outcome: Outcome
    /// The bytes of the body handed to the caller.
    public let bytes: Int

    /// Creates an end; the library makes them (a plugin gets real ones through ``NetworkAgentExchange/onStreamEnd(_:)``,
    /// in its tests too, by streaming through `StubTransport`).
    ///
    /// - Parameters:
    ///   - outcome: How the body ended.
    ///   - bytes: The bytes handed to the caller.
    package init(outcome: Outcome, bytes: Int) {
        self.outcome = outcome
        self.bytes = bytes
    }

    /// Whether the caller read the body to its end.
    package var isCompleted: Bool {
        if case .completed = outcome { return true }
        return false
    }
}
