import CCurl

/// The lifecycle of one ``CurlTransfer``: one value, changed only by ``transition(_:on:)``, a pure function from a
/// state and an event to the next state and the one action the engine performs.
///
/// The engine thread feeds it every event (its commands, libcurl's callbacks, libcurl's end of the transfer) and does
/// what the action says; nothing else decides what a transfer may do next. The bytes themselves (headers, body,
/// progress) are data the transfer keeps beside it; the state says where they go.
///
/// ```
/// created ──start──▶ running(upload, awaitingHead) ──headEnded──▶ running(upload, collecting | streaming)
///    │ stop                        │ fault (in a callback)                      │ done
///    ▼                             ▼                                            ▼
/// stoppedBeforeStart ──start──▶ aborting ──────────done / stop──────────────▶ finished
/// ```
enum CurlTransferState: Equatable, Sendable {
    /// Made in the caller's task; the engine has not taken it yet.
    case created
    /// A stop (a cancelled caller) reached the engine before the transfer did: it ends when it arrives.
    case stoppedBeforeStart(CurlTransfer.Stop)
    /// On libcurl: the request body's side and the response's side.
    case running(Upload, Response)
    /// A callback told libcurl to end the transfer (a body past the limit, a consumer gone, a body that cannot be
    /// read); libcurl's end (`done`) follows. `streaming`: the caller already has the head and a body stream.
    case aborting(CurlTransfer.Stop, streaming: Bool)
    /// Ended: the caller has its answer, or its body stream has ended.
    case finished

    /// What the caller waits for.
    enum Mode: Equatable, Sendable {
        /// The whole response (``CurlTransport/send(_:)``).
        case collect
        /// The head, then the body as a stream holding up to `bufferLimit` bytes unread.
        case stream(bufferLimit: Int)
    }

    /// The request body's side of a running transfer.
    enum Upload: Equatable, Sendable, CaseIterable {
        /// libcurl reads the body when it wants (or there is none).
        case flowing
        /// The body reader had nothing yet: libcurl paused the upload until it has.
        case waiting
    }

    /// The response's side of a running transfer.
    enum Response: Equatable, Sendable {
        /// The final head has not ended.
        case awaitingHead(Mode)
        /// The head ended; the body is collected for the caller. `streamed`: the caller asked for a stream, and
        /// gets the collected body as one (a redirect's head is not handed on; nor is a head without a status).
        case collecting(streamed: Bool)
        /// The caller has the head and a body stream; the body is written to it.
        case streaming(Flow)
    }

    /// Backpressure of a streamed body.
    enum Flow: Equatable, Sendable, CaseIterable {
        case flowing
        /// The stream's buffer filled up: the next bytes pause the transfer.
        case pauseNext
        /// libcurl holds the body until the consumer has read.
        case paused
    }

    enum Event: Equatable, Sendable {
        /// The engine took the transfer (its `add` command).
        case start(Mode)
        /// Stop from the engine's loop (a command or a deadline), outside libcurl's callbacks.
        case stop(CurlTransfer.Stop)
        /// Stop found inside a libcurl callback: libcurl must be told to end the transfer.
        case fault(CurlTransfer.Stop)
        /// The final response head ended (or body bytes came without one), with this status (0: none could be read).
        case headEnded(status: Int)
        /// Response body bytes arrived (write callback).
        case body
        /// The stream's buffer is full after the last write.
        case bufferFull
        /// The stream's consumer has read what waited.
        case demand
        /// libcurl asked for request body bytes and the body reader had none yet.
        case uploadStarved
        /// The body reader has bytes (or its end) for libcurl.
        case uploadReady
        /// libcurl ended the transfer with this result.
        case done(CURLcode)
    }

    enum Action: Equatable, Sendable {
        case none
        /// Set an easy handle up and add it to the multi handle.
        case attach
        /// Resume the caller with the head and a body stream holding up to `bufferLimit` bytes unread.
        case deliverHead(bufferLimit: Int)
        /// Keep the body bytes for the caller.
        case collect
        /// Write the body bytes to the stream.
        case write
        /// Return libcurl's pause value from the callback (`CURL_WRITEFUNC_PAUSE`, `CURL_READFUNC_PAUSE`).
        case pause
        /// Set the transfer's pause state with `curl_easy_pause`.
        case setPause(receive: Bool, send: Bool)
        /// Return libcurl's abort value from the callback; libcurl ends the transfer (`done` follows).
        case abort
        /// Take the transfer off libcurl (when on it) and settle it.
        case end(Ending)
    }

    /// How a transfer's caller is settled.
    enum Ending: Equatable, Sendable {
        /// Resume the caller with the collected body (as a stream if `streamed`).
        case respond(streamed: Bool)
        /// Resume the caller with an error.
        case fail(Failure)
        /// End the body stream.
        case finishStream
        /// End the body stream with an error.
        case failStream(Failure)
    }

    enum Failure: Equatable, Sendable {
        case stopped(CurlTransfer.Stop)
        /// libcurl's error.
        case libcurl(CURLcode)
        /// libcurl ended without an error but no response head came.
        case noResponse
    }

    /// The statuses whose response the transport follows: their body is collected (a redirect's body is small and
    /// never handed on), so that a streamed hop that redirects keeps its connection.
    static let redirectStatuses: Set<Int> = [301, 302, 303, 307, 308]

    /// Applies `event` and returns what to do.
    mutating func handle(_ event: Event) -> Action {
        let (next, action) = Self.transition(self, on: event)
        self = next
        return action
    }

    /// Whether the caller has the head (the head deadline no longer applies).
    var handedOnHead: Bool {
        switch self {
        case .running(_, .streaming), .aborting(_, streaming: true): true
        default: false
        }
    }

    /// Whether the final head is still to come (header lines belong to it, not to trailers).
    var awaitsHead: Bool {
        if case .running(_, .awaitingHead) = self { return true }
        return false
    }

    /// The next state and the action for `event` in `state`.
    static func transition(_ state: Self, on event: Event) -> (Self, Action) {
        switch event {
        case .start(let mode): start(state, mode)
        case .stop(let reason): stop(state, reason)
        case .fault(let reason): fault(state, reason)
        case .headEnded(let status): headEnded(state, status)
        case .body: body(state)
        case .bufferFull: bufferFull(state)
        case .demand: demand(state)
        case .uploadStarved: uploadStarved(state)
        case .uploadReady: uploadReady(state)
        case .done(let code): done(state, code)
        }
    }

    private static func start(_ state: Self, _ mode: Mode) -> (Self, Action) {
        switch state {
        case .created: (.running(.flowing, .awaitingHead(mode)), .attach)
        case .stoppedBeforeStart(let reason): (.finished, .end(.fail(.stopped(reason))))
        case .running, .aborting, .finished: (state, .none)
        }
    }

    private static func stop(_ state: Self, _ reason: CurlTransfer.Stop) -> (Self, Action) {
        switch state {
        case .created: (.stoppedBeforeStart(reason), .none)
        case .stoppedBeforeStart, .finished: (state, .none)
        case .running(_, .streaming): (.finished, .end(.failStream(.stopped(reason))))
        case .running: (.finished, .end(.fail(.stopped(reason))))
        // The first reason stands: it is why libcurl was told to stop.
        case .aborting(let first, let streaming): (.finished, ending(failing: .stopped(first), streaming: streaming))
        }
    }

    private static func fault(_ state: Self, _ reason: CurlTransfer.Stop) -> (Self, Action) {
        switch state {
        case .running(_, .streaming): (.aborting(reason, streaming: true), .abort)
        case .running: (.aborting(reason, streaming: false), .abort)
        case .created, .stoppedBeforeStart, .aborting, .finished: (state, .abort)
        }
    }

    private static func headEnded(_ state: Self, _ status: Int) -> (Self, Action) {
        guard case .running(let upload, .awaitingHead(let mode)) = state else { return (state, .none) }
        switch mode {
        case .collect:
            return (.running(upload, .collecting(streamed: false)), .none)
        case .stream(let bufferLimit):
            if status <= 0 || redirectStatuses.contains(status) {
                return (.running(upload, .collecting(streamed: true)), .none)
            }
            return (.running(upload, .streaming(.flowing)), .deliverHead(bufferLimit: bufferLimit))
        }
    }

    private static func body(_ state: Self) -> (Self, Action) {
        switch state {
        // Bytes before a head ended: collected, as for a head that cannot be handed on.
        case .running(let upload, .awaitingHead(let mode)):
            (.running(upload, .collecting(streamed: mode != .collect)), .collect)
        case .running(_, .collecting): (state, .collect)
        case .running(_, .streaming(.flowing)): (state, .write)
        case .running(let upload, .streaming(.pauseNext)): (.running(upload, .streaming(.paused)), .pause)
        case .running(_, .streaming(.paused)): (state, .pause)
        case .created, .stoppedBeforeStart, .aborting, .finished: (state, .abort)
        }
    }

    private static func bufferFull(_ state: Self) -> (Self, Action) {
        guard case .running(let upload, .streaming(.flowing)) = state else { return (state, .none) }
        return (.running(upload, .streaming(.pauseNext)), .none)
    }

    private static func demand(_ state: Self) -> (Self, Action) {
        switch state {
        case .running(let upload, .streaming(.pauseNext)):
            (.running(upload, .streaming(.flowing)), .none)
        case .running(let upload, .streaming(.paused)):
            (.running(upload, .streaming(.flowing)), .setPause(receive: false, send: upload == .waiting))
        default: (state, .none)
        }
    }

    private static func uploadStarved(_ state: Self) -> (Self, Action) {
        switch state {
        case .running(_, let response): (.running(.waiting, response), .pause)
        case .created, .stoppedBeforeStart, .aborting, .finished: (state, .abort)
        }
    }

    private static func uploadReady(_ state: Self) -> (Self, Action) {
        guard case .running(.waiting, let response) = state else { return (state, .none) }
        return (.running(.flowing, response), .setPause(receive: response == .streaming(.paused), send: false))
    }

    private static func done(_ state: Self, _ code: CURLcode) -> (Self, Action) {
        let failed = code != CURLE_OK
        switch state {
        case .created, .stoppedBeforeStart, .finished:
            return (state, .none)
        case .running(_, .awaitingHead):
            return (.finished, .end(.fail(failed ? .libcurl(code) : .noResponse)))
        case .running(_, .collecting(let streamed)):
            return (.finished, .end(failed ? .fail(.libcurl(code)) : .respond(streamed: streamed)))
        case .running(_, .streaming):
            return (.finished, .end(failed ? .failStream(.libcurl(code)) : .finishStream))
        case .aborting(let reason, let streaming):
            return (.finished, ending(failing: .stopped(reason), streaming: streaming))
        }
    }

    private static func ending(failing failure: Failure, streaming: Bool) -> Action {
        .end(streaming ? .failStream(failure) : .fail(failure))
    }
}
