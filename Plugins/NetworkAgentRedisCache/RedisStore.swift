import CHiredis
import Foundation
import NetworkAgent
import NetworkAgentDiskCache

/// A ``/NetworkAgentDiskCache/ResponseStore`` in Redis: one HTTP cache for every replica of a service, with
/// the disk cache's rules (``/NetworkAgentDiskCache/DiskCachePlugin``) in front of it.
///
/// ```swift
/// import NetworkAgentDiskCache
/// import NetworkAgentRedisCache
///
/// func sharedCache() throws -> DiskCachePlugin {
///     guard let url = URL(string: "redis://cache.internal:6379/0") else { throw URLError(.badURL) }
///     let store = try RedisStore(url: url, keyPrefix: "inventory")
///     // The cache goes last in the chain, as with the disk store.
///     return .cache(store: store)
/// }
/// ```
///
/// - **Entries**: one key per entry (`<prefix>:e:<identifier>`), the disk cache's checksummed entry format, written
///   with one `SET … PX` whose TTL covers the entry's freshness, its `stale-while-revalidate` / `stale-if-error`
///   window and, for entries with an `ETag` or `Last-Modified`, ``Configuration/validatorKeepPeriod``. Redis expires
///   and evicts them (`maxmemory-policy allkeys-lru` works: an evicted entry is a miss). A value that does not decode
///   is ignored, deleted and reported as a `cache.error` event (`reason=corrupt_entry`); the next response replaces
///   it. Bodies over ``Configuration/maximumEntryBytes`` are not shared.
/// - **Variants**: a small set per resource and user (`<prefix>:v:<primary key>`), read with its entries in one
///   script call, so a hit is one round trip.
/// - **Revalidation coalescing**: a stale entry is revalidated by the one process that takes its lock
///   (`SET <prefix>:l:<identifier> NX PX`), a lease of ``Configuration/commandTimeout`` its holder renews; the others
///   serve it stale within `stale-while-revalidate`, or wait up to ``Configuration/revalidationWaitLimit`` for the
///   entry it stores, taking the lock over if it is released or lapses first.
/// - **Never on the failure path**: a Redis that is down, slow (past ``Configuration/commandTimeout``) or answers
///   garbage makes the cache miss and report a `cache.error` event; the request goes to the origin. A store problem
///   adds at most one command timeout to a request: every call is bounded by it, and the first failure marks the
///   store down, so that later calls fail at once while its threads probe Redis in the background. Replies
///   announcing absurd arrays are refused, and keys of the wrong type are deleted or overwritten.
/// - **Threads**: each connection has its own thread running hiredis's blocking calls and pipelining the commands
///   queued meanwhile; every call suspends and never blocks Swift's cooperative pool.
///
/// Call ``shutdown()`` when done with a store: it closes the connections and stops their threads.
///
/// TLS (`rediss://`) is not available: hiredis 0.14, as Debian ships it, has none (see ``Error/Code/tlsUnsupported``).
public final class RedisStore: ResponseStore {
    /// How the store reaches Redis and what it keeps there.
    public let configuration: Configuration
    private let connections: [RedisConnection]
    private let nextConnection = Locked(0)
    /// This process's revalidation locks, by entry identifier.
    private let claims = Locked([String: Claim]())
    /// Whether ``shutdown()`` was called.
    private let isShutDown = Locked(false)
    private let entryPrefix: String
    private let entryPrefixData: Data
    /// Entries decoded from the values Redis returned, with those exact bytes: a value read again byte for byte is
    /// not decoded again (see `DecodedEntries`).
    private let decoded = Locked(DecodedEntries(budget: RedisStore.decodedBudget))

    /// The memory the decoded entries kept for repeated reads may take: 4 MiB.
    static let decodedBudget = 4 << 20

    /// Creates a store. It connects lazily, on the first command, and reconnects by itself.
    ///
    /// - Parameter configuration: The server URL, key prefix, timeouts and limits.
    /// - Throws: ``Error`` with ``Error/Code/invalidURL`` or ``Error/Code/tlsUnsupported`` when the URL cannot be
    ///   used. An unreachable server does not throw: the cache then misses.
    public init(configuration: Configuration) throws(RedisStore.Error) {
        let endpoint = try RedisEndpoint(url: configuration.url)
        self.configuration = configuration
        let circuit = RedisCircuit()
        self.connections = (0..<max(1, configuration.connectionCount)).map { _ in
            RedisConnection(endpoint: endpoint, configuration: configuration, circuit: circuit)
        }
        self.entryPrefix = configuration.keyPrefix + ":e:"
        self.entryPrefixData = Data(entryPrefix.utf8)
    }

    /// Creates a store with default settings but for the server and the key prefix.
    ///
    /// - Parameters:
    ///   - url: The server: `redis://[[user]:password@]host[:port][/db]`.
    ///   - keyPrefix: Prepended to every key. Defaults to ``Configuration/defaultKeyPrefix``.
    /// - Throws: ``Error`` with ``Error/Code/invalidURL`` or ``Error/Code/tlsUnsupported``.
    public convenience init(url: URL, keyPrefix: String = Configuration.defaultKeyPrefix) throws(RedisStore.Error) {
        try self.init(configuration: Configuration(url: url, keyPrefix: keyPrefix))
    }

    deinit {
        let shutDown = isShutDown.withLock { $0 }
        for claim in claims.withLock({ Array($0.values) }) { claim.renewal.cancel() }
        for connection in connections { connection.close() }
        #if DEBUG
        if !shutDown {
            FileHandle.standardError.write(
                Data(
                    ("RedisStore (\(configuration.keyPrefix)) was deallocated without shutdown(): its connection "
                        + "threads stop now, and queued commands fail. Call `await store.shutdown()` when done.\n")
                        .utf8
                )
            )
        }
        #endif
    }

    /// Ends the store: commands being sent finish, queued ones and every later one fail with
    /// ``Error/Code/shutDown`` (a cache on the store then misses), revalidation claims stop being renewed, and
    /// returns once every connection is closed and its thread has exited. Calling it again does nothing more.
    ///
    /// A store dropped without it still closes its connections (and says so on the standard error of a debug
    /// build).
    public func shutdown() async {
        isShutDown.withLock { $0 = true }
        for claim in claims.withLock({ Array($0.values) }) { claim.renewal.cancel() }
        for connection in connections { await connection.closeAndWait() }
    }

    /// Whether every connection's thread has exited (after ``shutdown()``).
    package var hasStopped: Bool { connections.allSatisfy(\.isFinished) }

    /// The store's connections, for tests that watch their threads outlive the store.
    var connectionThreads: [RedisConnection] { connections }

    // MARK: ResponseStore

    /// Every stored variant of one resource for one user, read in one round trip.
    ///
    /// - Parameter primaryKey: A `CacheKey.primary` value.
    /// - Returns: The entries that decode; a corrupt value is left out, deleted and reported.
    /// - Throws: `DiskCachePlugin.Error` (``/NetworkAgentDiskCache/DiskCachePlugin/Error/Code/unavailable`` or
    ///   ``/NetworkAgentDiskCache/DiskCachePlugin/Error/Code/io``) when Redis could not answer; ``Error`` with
    ///   ``Error/Code/shutDown`` after ``shutdown()``.
    public func variants(forPrimaryKey primaryKey: String) async throws -> [CachedEntry] {
        let reply = await connection().command(readArguments(primaryKey), script: .read)
        return try decodeVariants(reply, primaryKey: primaryKey)
    }

    /// The keys of every stored variant of one resource for one user: the entries read in one round trip, as
    /// ``variants(forPrimaryKey:)`` reads them (the keys are inside the entries).
    ///
    /// - Parameter primaryKey: A `CacheKey.primary` value.
    /// - Returns: The keys; empty when nothing is stored or Redis could not answer.
    public func variantKeys(forPrimaryKey primaryKey: String) async -> [CacheKey] {
        ((try? await variants(forPrimaryKey: primaryKey)) ?? []).map(\.key)
    }

    /// Stores an entry with a TTL of its usable life, plus ``Configuration/validatorKeepPeriod`` when it has a
    /// validator. A body over ``Configuration/maximumEntryBytes``, or a TTL under a millisecond, is not stored and
    /// removes the entry it would replace.
    ///
    /// - Parameters:
    ///   - entry: The entry.
    ///   - retention: How long the entry can be useful.
    /// - Returns: An empty usage: Redis evicts by itself and does not say what.
    /// - Throws: `DiskCachePlugin.Error` when Redis did not store it; ``Error`` with ``Error/Code/shutDown`` after
    ///   ``shutdown()``.
    @discardableResult
    public func store(_ entry: CachedEntry, retention: EntryRetention) async throws -> ResponseStoreUsage {
        guard let arguments = writeArguments(entry, retention: retention) else {
            await remove(entry.key)
            return ResponseStoreUsage()
        }
        try Self.check(await connection().command(arguments, script: .write))
        return ResponseStoreUsage()
    }

    /// Removes one entry, if it is stored; a failure is ignored (the entry expires by itself).
    ///
    /// - Parameter key: The entry's key.
    public func remove(_ key: CacheKey) async {
        _ = await connection().command(removeArguments(key), script: .remove)
    }

    /// Removes every entry for a URL, whatever its method, user or variant.
    ///
    /// - Parameter url: A normalised URL, as in `CacheKey.url`.
    /// - Returns: The number of entries removed; zero when Redis could not be asked.
    @discardableResult
    public func removeEntries(forURL url: String) async -> Int {
        let reply = await connection().command(removeURLArguments(url), script: .removeURL)
        if case .success(.integer(let count)) = reply { return count }
        return 0
    }

    /// Takes the entry's revalidation lock, as a lease the holder renews until it releases it.
    ///
    /// The lock (`<prefix>:l:<identifier>`) lives ``Configuration/commandTimeout`` at a time; while this store holds
    /// it, a task renews it every third of that, for at most ``Configuration/revalidationLockDuration``. A holder
    /// that is gone (crashed, dropped, or cut off from Redis when it releases) stops renewing, so its lock ends
    /// within one command timeout and the processes waiting on it take over.
    ///
    /// - Parameter key: The key of the stale entry.
    /// - Returns: `true` when this caller holds the lock now, or Redis could not be asked (no request waits on a
    ///   lock it cannot see); `false` when another holder has it.
    public func claimRevalidation(of key: CacheKey) async -> Bool {
        let identifier = key.identifier
        let token = UUID().uuidString
        let lock = Data(lockKey(identifier).utf8)
        let lease = Data("\(leaseMilliseconds)".utf8)
        let connection = connection()
        let reply = await connection.command([Data("1".utf8), lock, Data(token.utf8), lease], script: .claim)
        guard case .success(.integer(let taken)) = reply else { return true }
        guard taken == 1 else { return false }
        let renewal = Self.renew(
            lock: lock,
            token: Data(token.utf8),
            lease: lease,
            every: configuration.commandTimeout / 3,
            upTo: configuration.revalidationLockDuration,
            on: connection
        )
        let replaced = claims.withLock { $0.updateValue(Claim(token: token, renewal: renewal), forKey: identifier) }
        replaced?.renewal.cancel()
        return true
    }

    /// Releases a lock taken by ``claimRevalidation(of:)``, if this store still holds it. If Redis cannot be asked,
    /// the lock is no longer renewed and ends within one command timeout.
    ///
    /// - Parameter key: The key given to ``claimRevalidation(of:)``.
    public func releaseRevalidation(of key: CacheKey) async {
        let identifier = key.identifier
        guard let claim = claims.withLock({ $0.removeValue(forKey: identifier) }) else { return }
        claim.renewal.cancel()
        _ = await connection().command(
            [Data("1".utf8), Data(lockKey(identifier).utf8), Data(claim.token.utf8)],
            script: .release
        )
    }

    /// A lock's lease in milliseconds: the command timeout.
    private var leaseMilliseconds: Int64 { max(1, configuration.commandTimeout.roundedMilliseconds) }

    /// Renews a lock every `interval` while it is held, for at most `limit`; ends when the holder lost it, or the
    /// store was shut down.
    private static func renew(
        lock: Data,
        token: Data,
        lease: Data,
        every interval: Duration,
        upTo limit: Duration,
        on connection: RedisConnection
    ) -> Task<Void, Never> {
        Task {
            let clock = ContinuousClock()
            let end = clock.now + limit
            while clock.now + interval < end {
                do {
                    try await Task.sleep(for: interval)
                } catch {
                    return
                }
                let reply = await connection.command([Data("1".utf8), lock, token, lease], script: .renew)
                switch reply {
                case .success(.integer(0)): return
                case .failure(let error) where error.code == .shutDown: return
                default: continue
                }
            }
        }
    }

    /// See ``Configuration/revalidationWaitLimit``.
    public var revalidationWaitLimit: Duration { configuration.revalidationWaitLimit }

    /// Removes every key under ``Configuration/keyPrefix`` (a `SCAN` and `UNLINK` pass, each command bounded by
    /// ``Configuration/commandTimeout``); stops at the first command Redis does not answer.
    public func removeAll() async {
        var cursor = "0"
        repeat {
            let reply = await connection().command([
                Data("SCAN".utf8), Data(cursor.utf8), Data("MATCH".utf8),
                Data((Self.globEscaped(configuration.keyPrefix) + ":*").utf8), Data("COUNT".utf8), Data("500".utf8),
            ])
            guard case .success(.array(let parts)) = reply, parts.count == 2, case .string(let next) = parts[0],
                case .array(let keys) = parts[1]
            else { return }
            let names = keys.compactMap { key -> Data? in if case .string(let name) = key { name } else { nil } }
            if !names.isEmpty { _ = await connection().command([Data("UNLINK".utf8)] + names) }
            cursor = String(decoding: next, as: UTF8.self)
        } while cursor != "0"
    }

    /// Always empty: Redis holds the entries of every process and evicts by itself. Its `INFO memory` and
    /// `INFO keyspace` tell what it holds.
    public var usage: ResponseStoreUsage { ResponseStoreUsage() }

    // MARK: For tests and benchmarks

    /// Sends one command as is, on one of the store's connections; `nil` when Redis could not answer.
    package func rawCommand(_ arguments: [Data]) async -> RedisReply? {
        try? await connection().command(arguments).get()
    }

    /// Sends one command as is, on one of the store's connections: the reply, or why there is none.
    package func rawResult(_ arguments: [Data]) async -> Result<RedisReply, RedisStore.Error> {
        await connection().command(arguments)
    }

    /// The Redis key an entry is stored under.
    package func redisKey(for key: CacheKey) -> String { entryPrefix + key.identifier }

    // MARK: Commands

    /// A revalidation lock this store holds: its token, and the task renewing its lease.
    private struct Claim: Sendable {
        let token: String
        let renewal: Task<Void, Never>
    }

    private func connection() -> RedisConnection {
        guard connections.count > 1 else { return connections[0] }
        let index = nextConnection.withLock { next in
            next = (next + 1) % connections.count
            return next
        }
        return connections[index]
    }

    private func variantSetKey(_ primaryKey: String) -> String { configuration.keyPrefix + ":v:" + primaryKey }
    private func urlSetKey(_ url: String) -> String { configuration.keyPrefix + ":u:" + url }
    private func lockKey(_ identifier: String) -> String { configuration.keyPrefix + ":l:" + identifier }

    private func readArguments(_ primaryKey: String) -> [Data] {
        [Data("1".utf8), Data(variantSetKey(primaryKey).utf8), entryPrefixData]
    }

    private func removeArguments(_ key: CacheKey) -> [Data] {
        let identifier = key.identifier
        return [
            Data("2".utf8), Data((entryPrefix + identifier).utf8), Data(variantSetKey(key.primary).utf8),
            Data(identifier.utf8),
        ]
    }

    private func removeURLArguments(_ url: String) -> [Data] {
        [Data("1".utf8), Data(urlSetKey(url).utf8), entryPrefixData]
    }

    /// The write script's arguments, or `nil` when the entry is not to be stored (too large, no life left).
    private func writeArguments(_ entry: CachedEntry, retention: EntryRetention) -> [Data]? {
        guard entry.body.count <= configuration.maximumEntryBytes else { return nil }
        let keep = retention.hasValidator ? max(.zero, configuration.validatorKeepPeriod) : .zero
        let milliseconds = (retention.usableFor + keep).roundedMilliseconds
        guard milliseconds > 0 else { return nil }
        let identifier = entry.key.identifier
        return [
            Data("3".utf8), Data((entryPrefix + identifier).utf8), Data(variantSetKey(entry.key.primary).utf8),
            Data(urlSetKey(entry.key.url).utf8), EntryCodec.encode(entry), Data("\(milliseconds)".utf8),
            Data(identifier.utf8),
        ]
    }

    /// The entries of a read script's reply. Values that do not decode, or decode to another resource's entry,
    /// are deleted and reported.
    private func decodeVariants(
        _ reply: Result<RedisReply, RedisStore.Error>,
        primaryKey: String
    ) throws -> [CachedEntry] {
        let items: [RedisReply]
        switch reply {
        case .failure(let error):
            throw Self.cacheError(error)
        case .success(.array(let array)):
            items = array
        case .success(.error(let message)):
            throw DiskCachePlugin.Error(.io, "Redis: \(message)")
        case .success:
            throw DiskCachePlugin.Error(.io, "Redis: unexpected reply to a read")
        }
        var entries: [CachedEntry] = []
        var corrupt: [String] = []
        var index = 0
        while index + 1 < items.count {
            defer { index += 2 }
            guard case .string(let identifierBytes) = items[index] else { continue }
            let identifier = String(decoding: identifierBytes, as: UTF8.self)
            guard case .string(let value) = items[index + 1], let entry = decode(value, identifier: identifier),
                entry.key.primary == primaryKey
            else {
                corrupt.append(identifier)
                continue
            }
            entries.append(entry)
        }
        for identifier in corrupt { dropCorrupt(identifier, primaryKey: primaryKey) }
        return entries
    }

    /// The entry in a value read for `identifier`: the one kept from an earlier read of exactly these bytes, or the
    /// value decoded (and kept); `nil` when it does not decode.
    private func decode(_ value: Data, identifier: String) -> CachedEntry? {
        if let kept = decoded.withLock({ $0[identifier] }), kept.bytes == value { return kept.entry }
        guard let entry = try? EntryCodec.decode(value) else { return nil }
        decoded.withLock { $0.insert(Decoded(bytes: value, entry: entry), for: identifier) }
        return entry
    }

    /// Deletes a value that is not an entry of this resource and emits `cache.error` (`reason=corrupt_entry`).
    private func dropCorrupt(_ identifier: String, primaryKey: String) {
        NetworkAgentEvents.emit(
            NetworkAgentEvent(
                source: DiskCachePlugin.eventSource,
                name: "error",
                attributes: ["reason": DiskCachePlugin.Error.Code.corruptEntry.description, "store": "redis"]
            )
        )
        connection().send(
            [
                Data("2".utf8), Data((entryPrefix + identifier).utf8), Data(variantSetKey(primaryKey).utf8),
                Data(identifier.utf8),
            ],
            script: .remove
        ) { _ in }
    }

    /// Throws unless a write script answered 1.
    private static func check(_ reply: Result<RedisReply, RedisStore.Error>) throws {
        switch reply {
        case .success(.integer(1)):
            return
        case .failure(let error):
            throw cacheError(error)
        case .success(.error(let message)):
            throw DiskCachePlugin.Error(.io, "Redis: \(message)")
        case .success:
            throw DiskCachePlugin.Error(.io, "Redis: unexpected reply to a write")
        }
    }

    /// What a failed command throws: the store's own ``Error/Code/shutDown`` after ``shutdown()``, otherwise the
    /// cache's `unavailable` (Redis cannot be reached or is known to be down) or `io`.
    private static func cacheError(_ error: RedisStore.Error) -> any Swift.Error {
        if error.code == .shutDown { return error }
        return DiskCachePlugin.Error(error.code == .connectionFailed ? .unavailable : .io, "Redis: \(error.message)")
    }

    /// A key prefix with the glob characters of `SCAN … MATCH` escaped.
    private static func globEscaped(_ text: String) -> String {
        var escaped = ""
        for character in text {
            if "*?[]\\".contains(character) { escaped.append("\\") }
            escaped.append(character)
        }
        return escaped
    }
}
