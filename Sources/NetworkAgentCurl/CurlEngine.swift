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

/// One libcurl multi handle, driven by one dedicated thread.
///
/// Other threads hand it work through a locked command queue and `curl_multi_wakeup`; the thread runs
/// `curl_multi_perform`, completes finished transfers (resuming their callers' continuations from here, or from the
/// call's progress queue after its last report, so no thread of Swift's cooperative pool ever blocks on I/O) and
/// sleeps in `curl_multi_poll`. A transfer that cannot multiplex waits in the engine's own line, not on libcurl,
/// while its host's connections are all busy (see `origins`). Each transfer's lifecycle is its ``CurlTransferState``: the loop and libcurl's
/// callbacks feed it events and perform the actions it returns. Nothing slow runs here: request bodies are read by
/// ``CurlBodyReader`` and progress handlers called by ``CurlProgressRelay``, each on a queue of its own. Easy handles
/// are reused (`curl_easy_reset`, or for one plain GET after another only the options that differ: see `recycle`);
/// connections stay in the multi handle's connection cache for keep-alive and HTTP/2 multiplexing.
final class CurlEngine: @unchecked Sendable {
    // @unchecked Sendable: `inbox` is guarded by its lock; `multi` is used by other threads only through
    // curl_multi_wakeup (which libcurl documents as callable from any thread), called under that lock and only while
    // `inbox.exited` is false: the thread sets it under the lock before it frees the handles. Everything else
    // (`active`, `pool`, `streamsAwaitingHeads`, the admission's lines and counts, the share handle) is touched only on the engine thread, or in
    // `deinit` when the thread never ran its loop.

    enum Command: Sendable {
        /// Start a transfer; its caller waits on the continuation (resumed exactly once: see ``CurlTransfer/caller``).
        case add(CurlTransfer, CurlTransferState.Mode, UnsafeContinuation<CurlTransfer.Outcome, any Error>)
        case stop(CurlTransfer, CurlTransfer.Stop)
        /// The consumer of a streamed body read what waited.
        case unpause(CurlTransfer)
        /// The transfer's body reader has bytes (or its end) after it had none.
        case bodyReady(CurlTransfer)
        /// The transport is gone: end the thread once nothing is in flight.
        case release
        /// ``CurlTransport/shutdown()``: fail what is in flight, then end the thread.
        case shutdown
    }

    /// What other threads share with the engine thread, under one lock.
    struct Inbox {
        var commands: [Command] = []
        /// Shut down (or its thread ended): new transfers are refused.
        var closed = false
        /// The thread has ended its loop.
        var exited = false
        /// The thread is in (or about to enter) `curl_multi_poll`: only then does a command need a wake-up. While it
        /// works it takes the queue before it polls again, so a wake-up then would only cost two system calls.
        var polling = false
        /// Callers of ``shutdown()`` waiting for the thread to end.
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    /// A libcurl multi call the engine makes in its loop.
    enum MultiCall: Sendable {
        case perform, poll
    }

    /// Seams for the tests of faults this machine's libcurl cannot be made to show, and where the engine logs.
    struct Hooks: Sendable {
        /// Replaces libcurl's result for an easy option (a libcurl that refuses pinning, say); `nil` keeps libcurl's.
        var optionResult: (@Sendable (CURLoption) -> CURLcode?)?
        /// Replaces a multi call and its result (a failing `curl_multi_poll`, say); `nil` makes the real call.
        var multiResult: (@Sendable (MultiCall) -> CURLMcode?)?
        /// Where the engine reports what it goes on without (a refused tuning option, once per option).
        var log: @Sendable (String) -> Void = { message in
            FileHandle.standardError.write(Data("NetworkAgentCurl: \(message)\n".utf8))
        }
    }

    private let multi: UnsafeMutableRawPointer
    private let share: UnsafeMutableRawPointer?
    private let configuration: CurlTransport.Configuration
    private let hooks: Hooks
    /// The options whose refusal was logged (engine thread).
    private var loggedOptions: Set<UInt32> = []
    /// `curl_multi_poll` failures in a row: the loop backs off instead of spinning on a broken multi handle.
    private var pollFailures = 0
    private let inbox = Locked(Inbox())
    private var active: [UnsafeMutableRawPointer: CurlTransfer] = [:]
    private var pool: [CurlEasyHandle] = []
    private var streamsAwaitingHeads: [ObjectIdentifier: CurlTransfer] = [:]
    /// Admission of transfers that cannot multiplex (HTTP/1.1: an `http` URL, or ``CurlTransport/Configuration``'s
    /// `httpVersion` `.http1`): at most `maximumConnectionsPerHost` of one origin are on the multi handle at once;
    /// the others wait in their origin's line, off libcurl. libcurl would hold them as pending handles and walk every
    /// one of them in each curl_multi_perform and curl_multi_poll, so a request waiting for a connection would cost
    /// CPU on every wake-up while it waits. HTTPS transfers that may speak HTTP/2 are added at once, as one
    /// connection takes many of their streams (libcurl waits for it: PIPEWAIT).
    ///
    /// Each origin's count and line are one ``OriginAdmission``, found by its origin text when a transfer is attached
    /// (the previous transfer's, usually) and then reached through the transfer: ending a transfer and admitting the
    /// next hash no origin (with the counts and lines in two dictionaries keyed by the origin's text, a request that
    /// waited for a connection hashed it about ten times on this thread). An origin with nothing on the multi handle
    /// and nothing in line is forgotten.
    private var origins: [String: OriginAdmission] = [:]
    /// Transfers waiting in the lines (not counting those stopped while waiting, which stay in place until reached).
    private var waitingCount = 0
    /// Origins where a transfer left the multi handle: the loop admits their next waiting transfers.
    private var originsWithRoom: [OriginAdmission] = []
    /// The origin `admission(for:)` returned last; always in `origins`.
    private var lastAdmission: OriginAdmission?
    /// No waiting transfer's deadline is earlier (uptime ns); may be earlier than the nearest that still waits.
    private var nearestWaitDeadline = UInt64.max
    /// The transport released the engine: the loop ends when the last transfer has.
    private var released = false
    /// Pauses of streamed transfers for a slow consumer, in total (read by tests).
    let pauses = Locked(0)
    /// Transfers on the multi handle now (read by tests: nothing left behind after a call).
    let activeCount = Locked(0)
    /// The engine thread's kernel id (Linux; read by tests: `/proc/self/task/<id>` is gone once it ended).
    let threadID = Locked<Int?>(nil)

    init?(configuration: CurlTransport.Configuration, hooks: Hooks = Hooks()) {
        guard let multi = curl_multi_init() else { return nil }
        self.multi = multi
        self.configuration = configuration
        self.hooks = hooks
        // The multi handle's limits tune connection use: a libcurl that refuses one still sends every request
        // correctly, so a refusal is logged (once per transport) and the transport goes on.
        var refusals: [String] = []
        func set(_ option: CURLMoption, _ name: String, _ value: Int) {
            let result = ccurl_multi_setopt_long(multi, option, value)
            if result != CURLM_OK { refusals.append("\(name) (libcurl multi error \(result.rawValue))") }
        }
        set(CURLMOPT_PIPELINING, "CURLMOPT_PIPELINING", CURLPIPE_MULTIPLEX)
        set(CURLMOPT_MAX_HOST_CONNECTIONS, "CURLMOPT_MAX_HOST_CONNECTIONS", configuration.maximumConnectionsPerHost)
        set(CURLMOPT_MAX_TOTAL_CONNECTIONS, "CURLMOPT_MAX_TOTAL_CONNECTIONS", configuration.maximumConnections)
        // libcurl opens a new connection past 100 streams on one (its default), even with PIPEWAIT.
        set(
            CURLMOPT_MAX_CONCURRENT_STREAMS,
            "CURLMOPT_MAX_CONCURRENT_STREAMS",
            configuration.maximumStreamsPerConnection
        )
        set(CURLMOPT_MAXCONNECTS, "CURLMOPT_MAXCONNECTS", max(configuration.maximumConnections, 1))
        if configuration.cookies != .none, let share = curl_share_init() {
            let result = ccurl_share_setopt_long(share, CURLSHOPT_SHARE, Int(CURL_LOCK_DATA_COOKIE))
            if result != CURLSHE_OK { refusals.append("CURLSHOPT_SHARE (libcurl share error \(result.rawValue))") }
            self.share = share
        } else {
            self.share = nil
        }
        if !refusals.isEmpty {
            hooks.log("libcurl \(CurlRuntime.version) refused \(refusals.joined(separator: ", ")); going on without")
        }
        // The block holds the engine weakly: the loop's own frame keeps it alive until the loop ends (released by
        // its transport, nothing in flight), then the engine goes away with its last user (a body's callbacks).
        let thread = Thread { [weak self] in self?.run() }
        thread.name = "NetworkAgentCurl"
        thread.stackSize = 1 << 20
        thread.start()
    }

    /// Tells the engine its transport is gone. What is in flight goes on: a stream the caller still reads outlives
    /// its transport, as with URLSessionTransport; the thread ends, and the handles are freed, after the last
    /// transfer (a body read to its end, dropped or cancelled).
    func release() {
        submit(.release)
    }

    /// Hands the thread a command; `false` when the engine is shut down and refuses a new transfer (`add`).
    @discardableResult
    func submit(_ command: Command) -> Bool {
        // Only a command that finds the thread polling wakes it (a write to libcurl's wake-up socket, and a read on
        // the thread): the commands queued behind it, or while it works, are read in its next pass, as the loop takes
        // the whole queue before every poll.
        inbox.withLock { inbox in
            if case .add = command, inbox.closed { return false }
            // After the thread ended a stop or an unpause has nothing left to act on.
            guard !inbox.exited else { return true }
            inbox.commands.append(command)
            // Woken under the lock: once the thread has ended (`exited`, set under it) the multi handle is freed.
            if inbox.polling {
                inbox.polling = false
                curl_multi_wakeup(multi)
            }
            return true
        }
    }

    /// Refuses new transfers, fails those in flight with ``CurlTransport/Error/Code-swift.struct/shutdown``, and
    /// returns once the engine thread has ended its loop. Returns at once when it already has.
    func shutdown() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let ended = inbox.withLock { inbox in
                inbox.closed = true
                if inbox.exited { return true }
                inbox.waiters.append(continuation)
                inbox.commands.append(.shutdown)
                if inbox.polling {
                    inbox.polling = false
                    curl_multi_wakeup(multi)
                }
                return false
            }
            if ended { continuation.resume() }
        }
    }

    /// Whether ``shutdown()`` was called (or the thread ended after its transport was released).
    var isClosed: Bool { inbox.withLock { $0.closed } }

    deinit {
        // The thread frees the handles when it ends; this is for an engine whose thread never ran its loop (released
        // before it started: the thread holds the engine weakly until then).
        guard !inbox.withLock({ $0.exited }) else { return }
        pool.removeAll()
        curl_multi_cleanup(multi)
        if let share { curl_share_cleanup(share) }
    }

    // MARK: - The loop

    private func run() {
        threadID.withLock { $0 = Self.currentThreadID() }
        var running: Int32 = 0
        // Two buffers traded under the lock: the queue's commands are taken without copying, and neither buffer is
        // reallocated once it is large enough (taking a copy and emptying the queue "keeping its capacity" made a new
        // buffer on every pass, as the copy still shared the old one).
        var incoming: [Command] = []
        while true {
            inbox.withLock { inbox in
                inbox.polling = false
                swap(&inbox.commands, &incoming)
            }
            for command in incoming {
                switch command {
                case .add(let transfer, let mode, let continuation):
                    transfer.caller = continuation
                    feed(transfer, .start(mode))
                case .stop(let transfer, let reason): feed(transfer, .stop(reason))
                case .unpause(let transfer): feed(transfer, .demand)
                case .bodyReady(let transfer): feed(transfer, .uploadReady)
                case .release: released = true
                case .shutdown:
                    released = true
                    // The waiting first: a transfer stopped on the multi handle makes room for them.
                    stopWaiting(.shutdown)
                    for transfer in Array(active.values) { feed(transfer, .stop(.shutdown)) }
                }
            }
            incoming.removeAll(keepingCapacity: true)
            admitWaiting()
            let performed = hooks.multiResult?(.perform) ?? curl_multi_perform(multi, &running)
            if performed != CURLM_OK { failAll(call: "curl_multi_perform", code: performed) }
            drainMessages()
            // Added before the poll: libcurl's timer for a new handle makes the poll return at once.
            admitWaiting()
            if released && active.isEmpty && waitingCount == 0 {
                pool.removeAll()
                let waiters = inbox.withLock { inbox in
                    inbox.closed = true
                    inbox.exited = true
                    let waiting = inbox.waiters
                    inbox.waiters = []
                    return waiting
                }
                // Nothing else uses the handles once `exited` is set: free them (closing the connections) now, not
                // when the transport that holds the engine goes.
                curl_multi_cleanup(multi)
                if let share { curl_share_cleanup(share) }
                for waiter in waiters { waiter.resume() }
                return
            }
            let timeout = min(expireHeadDeadlines(), expireWaitDeadlines())
            // Commands that came while the thread worked are taken first, without a wake-up or a poll.
            let idle = inbox.withLock { inbox in
                guard inbox.commands.isEmpty else { return false }
                inbox.polling = true
                return true
            }
            guard idle else { continue }
            var ready: Int32 = 0
            let polled = hooks.multiResult?(.poll) ?? curl_multi_poll(multi, nil, 0, timeout, &ready)
            if polled == CURLM_OK {
                pollFailures = 0
            } else {
                // A poll that fails returns at once: without a pause the loop would spin on the broken handle.
                failAll(call: "curl_multi_poll", code: polled)
                pollFailures += 1
                usleep(UInt32(min(1000, 10 << min(pollFailures, 7))) * 1000)
            }
        }
    }

    /// A multi call failed: every transfer on the handle fails with its error (the transfers of the next pass try
    /// again, and fail the same way while the handle stays broken).
    private func failAll(call: String, code: CURLMcode) {
        guard !active.isEmpty else { return }
        let facts = CurlTransport.Error(
            .engineFailed,
            curlMultiCode: Int(code.rawValue),
            detail: "\(call): \(String(cString: curl_multi_strerror(code)))"
        )
        for transfer in Array(active.values) { feed(transfer, .stop(.engineFailed(facts))) }
    }

    /// The calling thread's kernel id, from `/proc/thread-self` (`<pid>/task/<tid>`); `nil` where there is none.
    private static func currentThreadID() -> Int? {
        var buffer = [CChar](repeating: 0, count: 64)
        let count = readlink("/proc/thread-self", &buffer, buffer.count - 1)
        guard count > 0 else { return nil }
        let link = String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return link.split(separator: "/").last.flatMap { Int($0) }
    }

    private func drainMessages() {
        var queued: Int32 = 0
        while let message = curl_multi_info_read(multi, &queued) {
            guard message.pointee.msg == CURLMSG_DONE, let easy = message.pointee.easy_handle,
                let transfer = active[easy]
            else { continue }
            feed(transfer, .done(message.pointee.data.result))
        }
    }

    /// Stops streamed transfers whose head is late; returns how long `curl_multi_poll` may sleep, in ms.
    private func expireHeadDeadlines() -> Int32 {
        guard !streamsAwaitingHeads.isEmpty else { return 1000 }
        let now = DispatchTime.now().uptimeNanoseconds
        var nearest: UInt64 = 1_000_000_000
        for transfer in Array(streamsAwaitingHeads.values) {
            guard let deadline = transfer.headDeadline else { continue }
            if transfer.state.handedOnHead {
                // The head was handed on: the deadline no longer applies (a redirect's head is not handed on).
                streamsAwaitingHeads[ObjectIdentifier(transfer)] = nil
            } else if deadline <= now {
                feed(transfer, .stop(.timedOut))
            } else {
                nearest = min(nearest, deadline - now)
            }
        }
        return Int32(clamping: (nearest + 999_999) / 1_000_000)
    }

    // MARK: - Admission

    /// Transfers waiting for room on one origin, first come first served. One stopped while waiting (cancelled,
    /// timed out) stays in place, no longer `isWaiting`, and is skipped when reached.
    ///
    /// A line that is never empty (more requests than connections, all the time) is compacted only now and then:
    /// the slot of a transfer that left is cleared at once, so the line does not keep finished transfers (their
    /// requests, bodies and header lists) alive until then, nor free them in a batch on the engine thread.
    struct WaitingLine {
        private var transfers: [CurlTransfer?] = []
        private var head = 0

        var isEmpty: Bool { head == transfers.count }
        /// The transfers from the first that has not left, in order (stopped ones included).
        var waiting: some Sequence<CurlTransfer> { transfers[head...].lazy.compactMap { $0 } }

        mutating func append(_ transfer: CurlTransfer) { transfers.append(transfer) }

        mutating func popFirst() -> CurlTransfer? {
            guard head < transfers.count else { return nil }
            let first = transfers[head]
            transfers[head] = nil
            head += 1
            if head == transfers.count {
                transfers.removeAll(keepingCapacity: true)
                head = 0
            } else if head >= 1024, head * 2 >= transfers.count {
                transfers.removeFirst(head)
                head = 0
            }
            return first
        }
    }

    /// One origin's admission (engine thread): its transfers on the multi handle, and those waiting for room.
    final class OriginAdmission {
        /// The scheme and authority (``CurlTransfer/originEnd(of:)``), the key in `origins`.
        let origin: String
        /// Transfers of the origin on the multi handle.
        var admitted = 0
        var line = WaitingLine()

        init(origin: String) { self.origin = origin }
    }

    /// The admission of the origin whose connection limit `transfer` counts against, `nil` when it is not limited
    /// here.
    private func admission(for transfer: CurlTransfer) -> OriginAdmission? {
        guard configuration.maximumConnectionsPerHost > 0,
            configuration.httpVersion == .http1 || !transfer.isHTTPS
        else { return nil }
        // The origin of the transfer before is reused when it is the same (it usually is), compared on the bytes:
        // an origin longer than 15 bytes is a `String` allocation per transfer otherwise, and a look-up hashes it.
        let end = CurlTransfer.originEnd(of: transfer.urlString)
        if let last = lastAdmission, Self.sameBytes(transfer.urlString.utf8[..<end], last.origin.utf8) { return last }
        let origin = String(transfer.urlString[..<end])
        let admission = origins[origin] ?? OriginAdmission(origin: origin)
        origins[origin] = admission
        let previous = lastAdmission
        lastAdmission = admission
        if let previous { forgetIfIdle(previous) }
        return admission
    }

    /// Whether two texts have the same bytes, compared as contiguous memory when both are (native strings are).
    private static func sameBytes(_ lhs: Substring.UTF8View, _ rhs: String.UTF8View) -> Bool {
        guard lhs.count == rhs.count else { return false }
        let compared = lhs.withContiguousStorageIfAvailable { left in
            rhs.withContiguousStorageIfAvailable { right in
                guard let leftBytes = left.baseAddress, let rightBytes = right.baseAddress else { return true }
                return memcmp(leftBytes, rightBytes, left.count) == 0
            }
        }
        return (compared ?? nil) ?? lhs.elementsEqual(rhs)
    }

    /// Forgets an origin with nothing on the multi handle and nothing in line, unless it is the last one a transfer
    /// was attached to: that one stays (at most one idle origin), as its transfers often all end before the next
    /// comes, and making it anew would allocate its text and hash it again. It goes when another origin is the last.
    private func forgetIfIdle(_ admission: OriginAdmission) {
        guard admission.admitted == 0, admission.line.isEmpty, admission !== lastAdmission,
            origins[admission.origin] === admission
        else { return }
        origins[admission.origin] = nil
    }

    /// Puts `transfer` in its origin's line, with the deadline it may wait until (its head deadline when streamed,
    /// else what is left of its timeout, which counts from when it was sent).
    private func wait(_ transfer: CurlTransfer, in admission: OriginAdmission) {
        transfer.isWaiting = true
        waitingCount += 1
        admission.line.append(transfer)
        if let deadline = transfer.headDeadline {
            transfer.waitDeadline = deadline
        } else if transfer.timeoutMilliseconds > 0 {
            let left = transfer.timeoutMilliseconds - CurlOptions.milliseconds(transfer.started.duration(to: .now))
            transfer.waitDeadline = DispatchTime.now().uptimeNanoseconds &+ UInt64(max(0, left)) &* 1_000_000
        }
        if let deadline = transfer.waitDeadline { nearestWaitDeadline = min(nearestWaitDeadline, deadline) }
    }

    /// Adds the waiting transfers of the origins that have room, in the order they came, up to the limit.
    private func admitWaiting() {
        let limit = configuration.maximumConnectionsPerHost
        while let admission = originsWithRoom.popLast() {
            while admission.admitted < limit, let next = admission.line.popFirst() {
                guard next.isWaiting else { continue }
                next.isWaiting = false
                waitingCount -= 1
                if next.timeoutMilliseconds > 0 {
                    let waited = CurlOptions.milliseconds(next.started.duration(to: .now))
                    guard waited < next.timeoutMilliseconds else {
                        feed(next, .stop(.timedOut))
                        continue
                    }
                    next.waitedMilliseconds = waited
                }
                if let deadline = next.waitDeadline, deadline <= DispatchTime.now().uptimeNanoseconds {
                    feed(next, .stop(.timedOut))
                    continue
                }
                admission.admitted += 1
                next.admission = admission
                setUp(next)
            }
            forgetIfIdle(admission)
        }
    }

    /// Stops the waiting transfers whose deadline passed; returns how long `curl_multi_poll` may sleep, in ms. Walks
    /// the lines only when the nearest known deadline has come (once per deadline, not per wake-up).
    private func expireWaitDeadlines() -> Int32 {
        guard waitingCount > 0 else {
            nearestWaitDeadline = .max
            return 1000
        }
        guard nearestWaitDeadline != .max else { return 1000 }
        var now = DispatchTime.now().uptimeNanoseconds
        if nearestWaitDeadline <= now {
            var expired: [CurlTransfer] = []
            var nearest = UInt64.max
            for admission in origins.values {
                for transfer in admission.line.waiting where transfer.isWaiting {
                    guard let deadline = transfer.waitDeadline else { continue }
                    if deadline <= now { expired.append(transfer) } else { nearest = min(nearest, deadline) }
                }
            }
            for transfer in expired {
                transfer.isWaiting = false
                waitingCount -= 1
                feed(transfer, .stop(.timedOut))
            }
            nearestWaitDeadline = nearest
            now = DispatchTime.now().uptimeNanoseconds
        }
        guard nearestWaitDeadline != .max else { return 1000 }
        let wait = nearestWaitDeadline > now ? nearestWaitDeadline - now : 0
        return Int32(clamping: min(1000, (wait + 999_999) / 1_000_000))
    }

    /// Fails every waiting transfer with `reason` (shutdown).
    private func stopWaiting(_ reason: CurlTransfer.Stop) {
        let waiting = origins.values.flatMap { $0.line.waiting.filter(\.isWaiting) }
        for admission in Array(origins.values) {
            admission.line = WaitingLine()
            forgetIfIdle(admission)
        }
        waitingCount = 0
        nearestWaitDeadline = .max
        for transfer in waiting {
            transfer.isWaiting = false
            feed(transfer, .stop(reason))
        }
    }

    // MARK: - Events and actions

    /// Feeds `event` to the transfer's state and performs the action (the loop's events: commands, deadlines,
    /// libcurl's end of a transfer; the callbacks perform their own).
    private func feed(_ transfer: CurlTransfer, _ event: CurlTransferState.Event) {
        switch transfer.handle(event) {
        case .attach: attach(transfer)
        case .end(let ending): end(transfer, ending)
        case .setPause(let receive, let send):
            guard let easy = transfer.easy else { return }
            let mask = (receive ? CURLPAUSE_RECV : 0) | (send ? CURLPAUSE_SEND : 0)
            _ = curl_easy_pause(easy.pointer, Int32(mask))
        case .none, .deliverHead, .collect, .write, .pause, .abort:
            // Actions of callback events: the loop's events never produce them.
            break
        }
    }

    /// Starts the transfer: on the multi handle when its origin has room (or it is not limited), else in line.
    private func attach(_ transfer: CurlTransfer) {
        if let admission = admission(for: transfer) {
            guard admission.admitted < configuration.maximumConnectionsPerHost else {
                wait(transfer, in: admission)
                return
            }
            admission.admitted += 1
            transfer.admission = admission
        }
        setUp(transfer)
    }

    /// Sets an easy handle up for the transfer and adds it to the multi handle; a transfer that cannot start is
    /// stopped (and fails) before anything is sent.
    private func setUp(_ transfer: CurlTransfer) {
        guard let easy = pool.popLast() ?? CurlEasyHandle() else {
            feed(transfer, .stop(.unavailable("libcurl could not create a transfer")))
            return
        }
        transfer.easy = easy
        transfer.engine = self
        let plain = CurlOptions.isPlain(transfer)
        if easy.holdsPlainOptions && !plain {
            // Another kind of transfer starts from libcurl's defaults, as after every other transfer.
            curl_easy_reset(easy.pointer)
            easy.holdsPlainOptions = false
        }
        let options = CurlOptions.apply(
            to: transfer,
            easy: easy,
            configuration: configuration,
            share: share,
            reusing: plain && easy.holdsPlainOptions,
            override: hooks.optionResult
        )
        // Only a plain set-up that libcurl took in full leaves options the next plain transfer may reuse.
        easy.holdsPlainOptions = plain && options.refused == nil && options.ignored.isEmpty
        for (option, code) in options.ignored where loggedOptions.insert(option.rawValue).inserted {
            hooks.log(
                "libcurl \(CurlRuntime.version) refused \(CurlOptions.name(of: option)) (libcurl error "
                    + "\(code.rawValue): \(String(cString: curl_easy_strerror(code)))); requests go on without it"
            )
        }
        if let (option, code) = options.refused {
            // Fail closed: nothing was sent, and nothing will be.
            feed(transfer, .stop(.refused(option, code)))
            return
        }
        if case .reader(let reader) = transfer.body {
            // Reads ahead on the reader's queue before libcurl first asks; the engine hears of its bytes through
            // the command queue.
            weak let engine = self
            reader.start { [weak transfer] in
                guard let transfer else { return }
                engine?.submit(.bodyReady(transfer))
            }
        }
        guard curl_multi_add_handle(multi, easy.pointer) == CURLM_OK else {
            feed(transfer, .stop(.unavailable("libcurl refused the transfer")))
            return
        }
        active[easy.pointer] = transfer
        activeCount.withLock { $0 = active.count }
        if transfer.headDeadline != nil { streamsAwaitingHeads[ObjectIdentifier(transfer)] = transfer }
    }

    /// Takes the transfer off libcurl when it is on it (before libcurl finished it, that closes its HTTP/1.1
    /// connection or resets its HTTP/2 stream), puts its easy handle back, and settles the caller.
    private func end(_ transfer: CurlTransfer, _ ending: CurlTransferState.Ending) {
        streamsAwaitingHeads[ObjectIdentifier(transfer)] = nil
        if transfer.isWaiting {
            // Stopped in line (cancelled): it stays there, skipped when reached.
            transfer.isWaiting = false
            waitingCount -= 1
        } else if let admission = transfer.admission {
            transfer.admission = nil
            admission.admitted -= 1
            if admission.line.isEmpty { forgetIfIdle(admission) } else { originsWithRoom.append(admission) }
        }
        var message: String?
        var verifyResult = 0
        if let easy = transfer.easy {
            if active.removeValue(forKey: easy.pointer) != nil {
                curl_multi_remove_handle(multi, easy.pointer)
                activeCount.withLock { $0 = active.count }
            }
            switch ending {
            case .respond, .finishStream:
                transfer.timings = CurlOptions.timings(of: easy.pointer, complete: true)
            case .fail, .failStream:
                if transfer.timeToHeaders > .zero {
                    transfer.timings = CurlOptions.timings(of: easy.pointer, complete: true)
                }
            }
            var responded = false
            switch ending {
            case .fail, .failStream:
                // Read only for an error's message.
                message = easy.errorMessage
                verifyResult = CurlOptions.verifyResult(of: easy.pointer)
            case .respond: responded = true
            case .finishStream: break
            }
            recycle(transfer, keepingPlainOptions: responded)
        }
        transfer.settle(ending, message: message, verifyResult: verifyResult)
    }

    /// Puts the easy handle back in the pool: reset, or, after a plain transfer that ended with its response, with its
    /// options kept for the next plain one (`curl_easy_reset` and setting every option again took about 5 % of the
    /// engine thread's CPU for a small response). What pointed to the transfer is cleared either way.
    private func recycle(_ transfer: CurlTransfer, keepingPlainOptions: Bool) {
        guard let easy = transfer.easy else { return }
        transfer.easy = nil
        if keepingPlainOptions && easy.holdsPlainOptions {
            _ = ccurl_easy_setopt_pointer(easy.pointer, CURLOPT_HEADERDATA, nil)
            _ = ccurl_easy_setopt_pointer(easy.pointer, CURLOPT_WRITEDATA, nil)
            _ = ccurl_easy_setopt_slist(easy.pointer, CURLOPT_HTTPHEADER, nil)
        } else {
            curl_easy_reset(easy.pointer)
            easy.holdsPlainOptions = false
        }
        easy.errorBuffer[0] = 0
        if pool.count < 256 { pool.append(easy) }
    }
}
