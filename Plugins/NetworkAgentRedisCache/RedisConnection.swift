import CHiredis
import Foundation
import NetworkAgent

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One connection to Redis, owned by its own thread: callers queue commands and get their replies through a
/// completion called on that thread. hiredis's blocking calls therefore never run on Swift's cooperative pool.
///
/// The thread takes every queued command at once, appends them all to hiredis's output buffer and then reads the
/// replies in order: concurrent requests are pipelined on one connection. When the connection fails (I/O error,
/// timeout), the batch's unanswered commands fail, the context is freed, and the next batch reconnects; a failed
/// attempt makes the following ones wait ``RedisStore/Configuration/reconnectDelay``, doubling up to
/// ``RedisStore/Configuration/maximumReconnectDelay``, and commands queued meanwhile fail at once.
final class RedisConnection: @unchecked Sendable {
    // @unchecked Sendable: `queue` and `isClosed` are only touched between `condition.lock()` and `unlock()`;
    // `context`, `scripts`, `scriptsStale`, `retryAt` and `retryDelay` only by the connection's own thread
    // (`run()` and what it calls), after `init` has returned and before the thread ends.
    typealias Completion = @Sendable (Result<RedisReply, RedisStore.Error>) -> Void

    private struct Command {
        let arguments: [Data]
        let script: RedisScript?
        let completion: Completion
    }

    private let endpoint: RedisEndpoint
    private let configuration: RedisStore.Configuration
    private let condition = NSCondition()
    private var queue: [Command] = []
    private var isClosed = false

    private var context: UnsafeMutablePointer<redisContext>?
    private var scripts: [String] = []
    private var scriptsStale = false
    private var retryAt: ContinuousClock.Instant?
    private var retryDelay: Duration
    private var lastFailure = RedisStore.Error(.connectionFailed, "not connected yet")

    init(endpoint: RedisEndpoint, configuration: RedisStore.Configuration) {
        self.endpoint = endpoint
        self.configuration = configuration
        self.retryDelay = configuration.reconnectDelay
        let thread = Thread { [self] in run() }
        thread.name = "RedisStore"
        thread.start()
    }

    /// Queues a command: plain arguments, or a script's keys and arguments (`numkeys key… arg…`).
    ///
    /// - Parameters:
    ///   - arguments: The command and its arguments, or for a script the arguments after its SHA.
    ///   - script: The script to run with `EVALSHA`, or `nil`.
    ///   - completion: Called once, on the connection's thread, with the reply or why there is none.
    func send(_ arguments: [Data], script: RedisScript? = nil, completion: @escaping Completion) {
        condition.lock()
        guard !isClosed else {
            condition.unlock()
            completion(.failure(RedisStore.Error(.connectionFailed, "the store is closed")))
            return
        }
        queue.append(Command(arguments: arguments, script: script, completion: completion))
        condition.signal()
        condition.unlock()
    }

    /// Sends a command and suspends until its reply; the caller's thread is free meanwhile.
    func command(_ arguments: [Data], script: RedisScript? = nil) async -> Result<RedisReply, RedisStore.Error> {
        await withCheckedContinuation { continuation in
            send(arguments, script: script) { continuation.resume(returning: $0) }
        }
    }

    /// Sends a command and blocks the calling thread until its reply. Never call it from the cooperative pool.
    func blockingCommand(_ arguments: [Data], script: RedisScript? = nil) -> Result<RedisReply, RedisStore.Error> {
        let done = DispatchSemaphore(value: 0)
        let result = Locked<Result<RedisReply, RedisStore.Error>?>(nil)
        send(arguments, script: script) { reply in
            result.withLock { $0 = reply }
            done.signal()
        }
        done.wait()
        return result.withLock { $0 } ?? .failure(RedisStore.Error(.commandFailed, "no reply"))
    }

    /// Stops the thread after the queued commands, which fail; later commands fail at once.
    func close() {
        condition.lock()
        isClosed = true
        condition.signal()
        condition.unlock()
    }

    // MARK: The connection's thread

    private func run() {
        while true {
            condition.lock()
            while queue.isEmpty && !isClosed { condition.wait() }
            let batch = queue
            queue.removeAll(keepingCapacity: true)
            let closing = isClosed
            condition.unlock()
            if closing {
                let failure = RedisStore.Error(.connectionFailed, "the store is closed")
                for command in batch { command.completion(.failure(failure)) }
                break
            }
            execute(batch)
        }
        disconnect()
    }

    private func execute(_ batch: [Command]) {
        guard let context = connectIfNeeded() else {
            for command in batch { command.completion(.failure(lastFailure)) }
            return
        }
        var appended = 0
        for command in batch {
            var arguments = command.arguments
            if let script = command.script {
                arguments = [Data("EVALSHA".utf8), Data(scripts[script.rawValue].utf8)] + arguments
            }
            guard Self.append(arguments, to: context) else { break }
            appended += 1
        }
        for (index, command) in batch.enumerated() {
            guard index < appended, let reply = CHiredis_nextReply(context) else {
                let failure = RedisStore.Error(.commandFailed, Self.errorText(context))
                for unanswered in batch[index...] { unanswered.completion(.failure(failure)) }
                lastFailure = failure
                disconnect()
                return
            }
            let value = RedisReply(reply)
            freeReplyObject(reply)
            if case .error(let message) = value, message.hasPrefix("NOSCRIPT") { scriptsStale = true }
            command.completion(.success(value))
        }
        if scriptsStale { disconnect() }
    }

    /// The live context, or a new one if the backoff allows an attempt now; `nil` when there is none.
    private func connectIfNeeded() -> UnsafeMutablePointer<redisContext>? {
        if let context { return context }
        let now = ContinuousClock.now
        if let retryAt, now < retryAt { return nil }
        if let context = connect() {
            self.context = context
            retryAt = nil
            retryDelay = configuration.reconnectDelay
            return context
        }
        retryAt = now + retryDelay
        retryDelay = min(retryDelay * 2, max(configuration.reconnectDelay, configuration.maximumReconnectDelay))
        return nil
    }

    /// Opens a connection, authenticates, selects the database and loads the scripts.
    private func connect() -> UnsafeMutablePointer<redisContext>? {
        guard
            let context = redisConnectWithTimeout(
                endpoint.host,
                Int32(endpoint.port),
                Self.makeTimeval(configuration.connectTimeout)
            )
        else {
            lastFailure = RedisStore.Error(.connectionFailed, "cannot allocate a hiredis context")
            return nil
        }
        guard context.pointee.err == 0 else {
            lastFailure = RedisStore.Error(
                .connectionFailed,
                "\(endpoint.host):\(endpoint.port): \(Self.errorText(context))"
            )
            redisFree(context)
            return nil
        }
        redisSetTimeout(context, Self.makeTimeval(configuration.commandTimeout))
        var setup: [[Data]] = []
        if let password = endpoint.password {
            setup.append([Data("AUTH".utf8)] + [endpoint.user, password].compactMap { $0.map { Data($0.utf8) } })
        }
        if endpoint.database != 0 { setup.append([Data("SELECT".utf8), Data("\(endpoint.database)".utf8)]) }
        for script in RedisScript.allCases {
            setup.append([Data("SCRIPT".utf8), Data("LOAD".utf8), Data(script.source.utf8)])
        }
        var shas: [String] = []
        for command in setup {
            guard Self.append(command, to: context), let reply = CHiredis_nextReply(context) else {
                lastFailure = RedisStore.Error(.connectionFailed, Self.errorText(context))
                redisFree(context)
                return nil
            }
            let value = RedisReply(reply)
            freeReplyObject(reply)
            switch value {
            case .error(let message):
                // Never the command itself: AUTH's arguments hold the password.
                lastFailure = RedisStore.Error(.connectionFailed, "connection setup refused: \(message)")
                redisFree(context)
                return nil
            case .string(let sha):
                shas.append(String(decoding: sha, as: UTF8.self))
            default:
                break
            }
        }
        guard shas.count == RedisScript.allCases.count else {
            lastFailure = RedisStore.Error(.connectionFailed, "the server did not load the store's scripts")
            redisFree(context)
            return nil
        }
        scripts = shas
        scriptsStale = false
        return context
    }

    private func disconnect() {
        if let context { redisFree(context) }
        context = nil
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
        let text = withUnsafeBytes(of: context.pointee.errstr) { bytes in
            String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
        }
        return text.isEmpty ? "connection lost" : text
    }

    private static func makeTimeval(_ duration: Duration) -> timeval {
        let microseconds = max(1_000, Int(duration.nanoseconds / 1_000))
        return .init(tv_sec: .init(microseconds / 1_000_000), tv_usec: .init(microseconds % 1_000_000))
    }
}
