import CHiredis
import Dispatch
import Foundation
import NetworkAgent
import NetworkAgentDiskCache

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One connection to Redis, owned by its own thread: callers queue commands and get their replies through a
/// completion called on that thread. hiredis's blocking calls therefore never run on Swift's cooperative pool.
///
/// The thread takes every queued command at once, appends them all to hiredis's output buffer and then reads the
/// replies in order: concurrent requests are pipelined on one connection.
///
/// Faults are budgeted: a caller waits at most ``RedisStore/Configuration/commandTimeout`` for a reply
/// (``command(_:script:)`` gives up then, whatever the thread is doing), and the first failure opens the store's
/// ``RedisCircuit``: later commands fail at once while the threads probe Redis in the background. A failed context is freed off the
/// thread (hiredis may take long to free what a broken server announced), and replies announcing absurd arrays are
/// refused before anything is allocated (`CHiredis_boundReplies`).
///
/// One synchronisation primitive: the connection's `NSCondition`. It guards the queue and the connection's state,
/// wakes the thread (which sleeps on it until a command is queued or a probe is due), and decides which of the
/// thread and a caller's deadline resumes a waiting caller.
///
/// Reconnecting does not hold up the commands queued meanwhile: once a connection has loaded the store's scripts,
/// a new connection sends its setup (`AUTH`, `SELECT`, `SCRIPT LOAD`) in the same write as the queued commands, so
/// they are answered in the round trip that sets the connection up.
final class RedisConnection: @unchecked Sendable {
    // @unchecked Sendable: `queue`, `isClosed`, `hasExited` and `exitWaiters` are only touched between
    // `condition.lock()` and `unlock()`; `context`, `scripts`, `scriptSHAs`, `scriptsStale`, `probeAt` and `probeDelay` only by
    // the connection's own thread (`run()` and what it calls), after `init` has returned and before the thread ends.
    typealias Completion = @Sendable (Result<RedisReply, RedisStore.Error>) -> Void

    private struct Command {
        let arguments: [Data]
        let script: RedisScript?
        let completion: Completion
    }

    /// A reply delivered once: by the thread, or by the caller's deadline, whichever comes first.
    private final class PendingReply: @unchecked Sendable {
        // @unchecked Sendable: `continuation` is only touched between `lock.lock()` and `unlock()`.
        private let lock: NSCondition
        private var continuation: CheckedContinuation<Result<RedisReply, RedisStore.Error>, Never>?

        init(_ continuation: CheckedContinuation<Result<RedisReply, RedisStore.Error>, Never>, lock: NSCondition) {
            self.continuation = continuation
            self.lock = lock
        }

        /// Resumes the caller unless it was resumed already; `true` when this call did.
        @discardableResult
        func resume(_ result: Result<RedisReply, RedisStore.Error>) -> Bool {
            lock.lock()
            let continuation = self.continuation.take()
            lock.unlock()
            guard let continuation else { return false }
            continuation.resume(returning: result)
            return true
        }
    }

    /// A hiredis context handed to the teardown queue.
    private struct DoomedContext: @unchecked Sendable {
        // @unchecked Sendable: the connection's thread gives up the pointer (sets `context` to nil) before making
        // this; the teardown queue's block is then its only holder and frees it once.
        let context: UnsafeMutablePointer<redisContext>
    }

    private let endpoint: RedisEndpoint
    private let configuration: RedisStore.Configuration
    private let circuit: RedisCircuit
    /// The command timeouts of the callers waiting for replies.
    private let deadlines: ReplyDeadlines
    private let condition = NSCondition()
    private var queue: [Command] = []
    private var isClosed = false
    private var hasExited = false
    private var exitWaiters: [CheckedContinuation<Void, Never>] = []

    private var context: UnsafeMutablePointer<redisContext>?
    private var scripts: [String] = [] {
        didSet { scriptSHAs = scripts.map { Data($0.utf8) } }
    }
    /// ``scripts`` as the bytes an `EVALSHA` sends, made once per connection setup rather than per command.
    private var scriptSHAs: [Data] = []
    private var scriptsStale = false
    private var probeAt: ContinuousClock.Instant?
    private var probeDelay: Duration

    init(endpoint: RedisEndpoint, configuration: RedisStore.Configuration, circuit: RedisCircuit) {
        self.endpoint = endpoint
        self.configuration = configuration
        self.circuit = circuit
        self.deadlines = ReplyDeadlines(timeout: configuration.commandTimeout)
        self.probeDelay = configuration.reconnectDelay
        circuit.onOpen { [weak self] in self?.wake() }
        let thread = Thread { [self] in run() }
        thread.name = "RedisStore"
        thread.start()
    }

    /// Queues a command: plain arguments, or a script's keys and arguments (`numkeys key… arg…`). Fails at once
    /// when the store is closed or Redis is known to be down.
    ///
    /// - Parameters:
    ///   - arguments: The command and its arguments, or for a script the arguments after its SHA.
    ///   - script: The script to run with `EVALSHA`, or `nil`.
    ///   - completion: Called once, on the connection's thread or the caller's, with the reply or why there is none.
    func send(_ arguments: [Data], script: RedisScript? = nil, completion: @escaping Completion) {
        condition.lock()
        if isClosed {
            condition.unlock()
            completion(.failure(Self.closedError))
            return
        }
        if let failure = circuit.failure {
            condition.unlock()
            completion(.failure(failure))
            return
        }
        queue.append(Command(arguments: arguments, script: script, completion: completion))
        condition.signal()
        condition.unlock()
    }

    /// Sends a command and suspends until its reply, or until ``RedisStore/Configuration/commandTimeout`` has
    /// passed (the caller is resumed then, with a failure, and Redis is treated as down), or until the deadline of
    /// the request it serves (`StoreDeadline`), if that comes first; the caller's thread is free meanwhile.
    func command(_ arguments: [Data], script: RedisScript? = nil) async -> Result<RedisReply, RedisStore.Error> {
        let timeout = configuration.commandTimeout
        let circuit = self.circuit
        let deadlines = self.deadlines
        return await withCheckedContinuation { continuation in
            let pending = PendingReply(continuation, lock: condition)
            let waiter = deadlines.add {
                let failure = Self.deadlineError(timeout)
                if pending.resume(.failure(failure)) { circuit.open(failure) }
            }
            send(arguments, script: script) { result in
                deadlines.answered(waiter)
                pending.resume(result)
            }
            // A request with less time left than the command timeout is not held past its own deadline; Redis is
            // not known to be down for that, so the circuit stays as it is.
            if let left = StoreDeadline.remaining, left < timeout {
                DispatchQueue.global().asyncAfter(deadline: .now() + max(left, .zero).timeInterval) {
                    pending.resume(.failure(RedisStore.Error(.commandFailed, "no reply before the request's deadline")))
                }
            }
        }
    }

    /// Stops the thread after the commands it is running, which finish; queued and later commands fail with
    /// ``RedisStore/Error/Code/shutDown``. Returns at once.
    func close() {
        condition.lock()
        isClosed = true
        condition.signal()
        condition.unlock()
    }

    /// ``close()``, then suspends until the thread has exited and the connection is closed.
    func closeAndWait() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            condition.lock()
            isClosed = true
            condition.signal()
            if hasExited {
                condition.unlock()
                continuation.resume()
            } else {
                exitWaiters.append(continuation)
                condition.unlock()
            }
        }
    }

    /// Whether the thread has exited.
    var isFinished: Bool {
        condition.lock()
        defer { condition.unlock() }
        return hasExited
    }

    private func wake() {
        condition.lock()
        condition.signal()
        condition.unlock()
    }

    // MARK: The connection's thread

    private func run() {
        while let batch = nextBatch() {
            if let failure = circuit.failure {
                // Queued before the circuit opened: they fail now, and the thread probes when it is due.
                for command in batch { command.completion(.failure(failure)) }
                probeIfDue()
                continue
            }
            execute(batch)
        }
        if let context { redisFree(context) }
        context = nil
        condition.lock()
        hasExited = true
        let waiters = exitWaiters
        exitWaiters = []
        condition.unlock()
        for waiter in waiters { waiter.resume() }
    }

    /// The commands queued so far (empty when a probe is due); `nil` once the connection is closed, after failing
    /// what was still queued.
    private func nextBatch() -> [Command]? {
        condition.lock()
        while queue.isEmpty && !isClosed {
            guard circuit.failure != nil else {
                condition.wait()
                continue
            }
            let now = ContinuousClock.now
            guard let probeAt, now < probeAt else {
                condition.unlock()
                return []
            }
            _ = condition.wait(until: Date(timeIntervalSinceNow: (probeAt - now).timeInterval))
        }
        let batch = queue
        queue.removeAll(keepingCapacity: true)
        let closing = isClosed
        condition.unlock()
        guard closing else { return batch }
        for command in batch { command.completion(.failure(Self.closedError)) }
        return nil
    }

    private func execute(_ batch: [Command]) {
        // A connection that knows the scripts' SHAs (from its first connection) sends the setup of a new one in
        // the same write as the batch: a reconnection costs the batch no round trip of its own.
        var setup: [[Data]] = []
        if context == nil {
            let known = !scripts.isEmpty
            switch known ? open() : connect() {
            case .success(let context):
                self.context = context
                if known { setup = setupCommands() }
            case .failure(let failure):
                fail(failure)
            }
        }
        guard let context else {
            for command in batch { command.completion(.failure(circuit.failure ?? Self.closedError)) }
            return
        }
        for command in setup where !Self.append(command, to: context) {
            let failure = RedisStore.Error(.connectionFailed, Self.errorText(context))
            fail(failure)
            for command in batch { command.completion(.failure(failure)) }
            return
        }
        var appended = 0
        for command in batch {
            var arguments = command.arguments
            if let script = command.script {
                arguments = [Self.evalSHA, scriptSHAs[script.rawValue]] + arguments
            }
            guard Self.append(arguments, to: context) else { break }
            appended += 1
        }
        // A refused setup fails the batch, which Redis then refused too (no AUTH) or ran in database 0 (a SELECT of
        // a database the server no longer has: the first connection checked it).
        if !setup.isEmpty, let failure = checkSetupReplies(context, count: setup.count) {
            fail(failure)
            for command in batch { command.completion(.failure(failure)) }
            return
        }
        for (index, command) in batch.enumerated() {
            guard index < appended, let reply = CHiredis_nextReply(context) else {
                let failure = RedisStore.Error(.commandFailed, Self.errorText(context))
                fail(failure)
                for unanswered in batch[index...] { unanswered.completion(.failure(failure)) }
                return
            }
            let value = RedisReply(reply)
            freeReplyObject(reply)
            if case .error(let message) = value, message.hasPrefix("NOSCRIPT") { scriptsStale = true }
            command.completion(.success(value))
        }
        if scriptsStale { teardown() }
    }

    /// Reads the replies to the setup commands sent ahead of a batch; a failure when Redis refused one or loaded a
    /// script under another SHA than this connection uses.
    private func checkSetupReplies(_ context: UnsafeMutablePointer<redisContext>, count: Int) -> RedisStore.Error? {
        switch Self.readSetupReplies(context, count: count) {
        case .failure(let failure):
            return failure
        case .success(let shas) where shas != scripts:
            return RedisStore.Error(.connectionFailed, "the server loaded the store's scripts under other SHAs")
        case .success:
            scriptsStale = false
            return nil
        }
    }

    /// Reads the replies to `count` setup commands: the SHAs of the scripts loaded, or why the setup failed.
    private static func readSetupReplies(
        _ context: UnsafeMutablePointer<redisContext>,
        count: Int
    ) -> Result<[String], RedisStore.Error> {
        var shas: [String] = []
        for _ in 0..<count {
            guard let reply = CHiredis_nextReply(context) else {
                return .failure(RedisStore.Error(.connectionFailed, errorText(context)))
            }
            let value = RedisReply(reply)
            freeReplyObject(reply)
            switch value {
            case .error(let message):
                // Never the command itself: AUTH's arguments hold the password.
                return .failure(RedisStore.Error(.connectionFailed, "connection setup refused: \(message)"))
            case .string(let sha):
                shas.append(String(decoding: sha, as: UTF8.self))
            default:
                break
            }
        }
        guard shas.count == RedisScript.allCases.count else {
            return .failure(RedisStore.Error(.connectionFailed, "the server did not load the store's scripts"))
        }
        return .success(shas)
    }

    /// Drops the context and opens the circuit; the first probe comes after
    /// ``RedisStore/Configuration/reconnectDelay``.
    private func fail(_ failure: RedisStore.Error) {
        teardown()
        circuit.open(failure)
        probeDelay = configuration.reconnectDelay
        probeAt = ContinuousClock.now + probeDelay
    }

    /// Probes Redis if the circuit is open and the probe is due: a `PING` on the live context, or a new connection.
    /// Success closes the circuit; failure schedules the next probe, measured from the end of this one.
    private func probeIfDue() {
        guard circuit.failure != nil else { return }
        if let probeAt, ContinuousClock.now < probeAt { return }
        var answered = false
        if let context {
            if Self.append([Data("PING".utf8)], to: context), let reply = CHiredis_nextReply(context) {
                answered = RedisReply(reply) == .status("PONG")
                freeReplyObject(reply)
            }
        } else if case .success(let context) = connect() {
            self.context = context
            answered = true
        }
        if answered {
            probeAt = nil
            probeDelay = configuration.reconnectDelay
            circuit.close()
            return
        }
        teardown()
        probeAt = ContinuousClock.now + probeDelay
        probeDelay = min(probeDelay * 2, max(configuration.reconnectDelay, configuration.maximumReconnectDelay))
    }

    /// Opens a connection and bounds its replies, without setting it up.
    private func open() -> Result<UnsafeMutablePointer<redisContext>, RedisStore.Error> {
        guard
            let context = redisConnectWithTimeout(
                endpoint.host,
                Int32(endpoint.port),
                Self.makeTimeval(configuration.connectTimeout)
            )
        else {
            return .failure(RedisStore.Error(.connectionFailed, "cannot allocate a hiredis context"))
        }
        func failed(_ message: String) -> Result<UnsafeMutablePointer<redisContext>, RedisStore.Error> {
            Self.free(context)
            return .failure(RedisStore.Error(.connectionFailed, message))
        }
        guard context.pointee.err == 0 else {
            return failed("\(endpoint.host):\(endpoint.port): \(Self.errorText(context))")
        }
        guard CHiredis_boundReplies(context) == REDIS_OK else { return failed("cannot bound hiredis's replies") }
        redisSetTimeout(context, Self.makeTimeval(configuration.commandTimeout))
        return .success(context)
    }

    /// What sets a new connection up: `AUTH`, `SELECT` where needed, and a `SCRIPT LOAD` of every script.
    private func setupCommands() -> [[Data]] {
        var setup: [[Data]] = []
        if let password = endpoint.password {
            setup.append([Data("AUTH".utf8)] + [endpoint.user, password].compactMap { $0.map { Data($0.utf8) } })
        }
        if endpoint.database != 0 { setup.append([Data("SELECT".utf8), Data("\(endpoint.database)".utf8)]) }
        for script in RedisScript.allCases {
            setup.append([Data("SCRIPT".utf8), Data("LOAD".utf8), Data(script.source.utf8)])
        }
        return setup
    }

    /// Opens a connection and sets it up, waiting for the replies (one round trip: the setup is pipelined), and
    /// learns the scripts' SHAs.
    private func connect() -> Result<UnsafeMutablePointer<redisContext>, RedisStore.Error> {
        let context: UnsafeMutablePointer<redisContext>
        switch open() {
        case .success(let opened): context = opened
        case .failure(let failure): return .failure(failure)
        }
        let setup = setupCommands()
        let result: Result<[String], RedisStore.Error> =
            setup.allSatisfy({ Self.append($0, to: context) })
            ? Self.readSetupReplies(context, count: setup.count)
            : .failure(RedisStore.Error(.connectionFailed, Self.errorText(context)))
        switch result {
        case .success(let shas):
            scripts = shas
            scriptsStale = false
            return .success(context)
        case .failure(let failure):
            Self.free(context)
            return .failure(failure)
        }
    }

    /// Drops the context; it is freed on another thread, off the command path.
    private func teardown() {
        guard let context else { return }
        self.context = nil
        Self.free(context)
    }

    /// Frees a context on a background queue: freeing what a broken server made hiredis build must not hold up the
    /// connection's thread.
    private static func free(_ context: UnsafeMutablePointer<redisContext>) {
        let doomed = DoomedContext(context: context)
        DispatchQueue.global(qos: .utility).async { redisFree(doomed.context) }
    }

    /// Appends one command to the context's output buffer; `false` when hiredis refused it.
    private static func append(_ arguments: [Data], to context: UnsafeMutablePointer<redisContext>) -> Bool {
        var buffer = [UInt8]()
        buffer.reserveCapacity(arguments.reduce(1) { $0 + $1.count })
        var offsets: [Int] = []
        var lengths: [Int] = []
        for argument in arguments {
            offsets.append(buffer.count)
            lengths.append(argument.count)
            buffer.append(contentsOf: argument)
        }
        buffer.append(0)
        return buffer.withUnsafeBytes { bytes -> Bool in
            guard let base = bytes.baseAddress else { return false }
            let pointers = offsets.map { (base + $0).assumingMemoryBound(to: CChar.self) }
            return pointers.withUnsafeBufferPointer { argv -> Bool in
                lengths.withUnsafeBufferPointer { argvlen -> Bool in
                    guard let argvBase = argv.baseAddress, let lengthBase = argvlen.baseAddress else { return false }
                    return CHiredis_append(context, Int32(arguments.count), argvBase, lengthBase) == REDIS_OK
                }
            }
        }
    }

    private static func errorText(_ context: UnsafeMutablePointer<redisContext>) -> String {
        if CHiredis_refusedReply(context) != 0 {
            return "the server announced a reply over \(CHIREDIS_MAXIMUM_ELEMENTS) elements (refused)"
        }
        let text = withUnsafeBytes(of: context.pointee.errstr) { bytes in
            String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
        }
        return text.isEmpty ? "connection lost" : text
    }

    private static let evalSHA = Data("EVALSHA".utf8)

    private static let closedError = RedisStore.Error(.shutDown, "the store was shut down")

    private static func deadlineError(_ timeout: Duration) -> RedisStore.Error {
        RedisStore.Error(.commandFailed, "no reply within the command timeout (\(timeout))")
    }

    private static func makeTimeval(_ duration: Duration) -> timeval {
        let microseconds = max(1_000, Int(duration.nanoseconds / 1_000))
        return .init(tv_sec: .init(microseconds / 1_000_000), tv_usec: .init(microseconds % 1_000_000))
    }
}
