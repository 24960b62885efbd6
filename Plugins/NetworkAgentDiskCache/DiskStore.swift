import Foundation
import NetworkAgent

#if canImport(Glibc)
import Glibc
// `timespec`'s fields (`stat.st_mtim`) are declared by the toolchain's shims module: an optimised build, checking
// member imports per file, wants it named.
#if canImport(SwiftOverlayShims)
import SwiftOverlayShims
#endif
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The default ``ResponseStore``: one file per entry in a directory, bounded in bytes with least-recently-used
/// eviction, safe against a crash at any moment.
///
/// Layout of ``directory``:
/// - `lock` — held with `flock(LOCK_EX)` for the store's lifetime; a second store on the same directory, in this
///   process or another, fails with ``DiskCachePlugin/Error/Code/directoryLocked``. The kernel releases the lock when the
///   process dies, however it dies. Plugins created on a directory
///   (``DiskCachePlugin/init(directory:maximumBytes:durability:configuration:)``) share one store per directory
///   within a process instead; a store you create yourself is yours alone, so hand that same instance to every
///   plugin that should use it.
/// - `entries/<identifier>` — one entry per file, named by ``CacheKey/identifier``, in the format of
///   `Docs/DiskCache.md` (a checksummed key, metadata and body).
/// - `entries/.partial-<n>` — entries being written. A write goes to a new file of such a name and becomes visible
///   only by `rename(2)` to its identifier, which is atomic: a reader (or a restart after a crash) sees the old entry
///   or the new one, never a mix. Leftovers from a crash are deleted at start (they are not entries, so they are not
///   counted as damaged). The rename stays within one directory: a rename between two directories takes a lock
///   over the whole file system, which made two concurrent writes cost about twice the CPU each.
/// - `tmp/` — where earlier versions wrote their entries being written; a store deletes it, with any leftovers,
///   when it opens.
///
/// At start the index is rebuilt by reading each entry's prefix and key only (never its metadata or body): entries
/// whose key checksum or length does not verify are deleted and counted in ``corruptEntriesDroppedAtOpen``. Every
/// read verifies the whole entry's checksum before it is served; a corrupt entry is deleted and reported. Lookups
/// are O(1) in the number of entries. The order of least recent use survives restarts, to within a minute, through
/// the files' modification times, which a read sets to now when they are a minute old or more.
///
/// Durability: with ``Durability/processCrash`` (the default) nothing is synced — an entry written before a process
/// crash is there afterwards, because the kernel holds the written pages; after a power loss an entry may be
/// missing or torn, and the checksums drop torn ones. ``Durability/powerLoss`` syncs every entry and the directory
/// before the write returns, for caches that an app relies on offline, at about a millisecond per write.
///
/// Failures after creation never throw out of a request: an unwritable or vanished directory or a full disk makes
/// writes fail with ``DiskCachePlugin/Error/Code/io`` (the plugin reports it as an event and carries on), and a missing
/// directory is created again on the next write.
public final class DiskStore: ResponseStore {
    /// What a completed write survives.
    public enum Durability: Sendable, Hashable {
        /// A crash or kill of the process: written entries are complete and visible afterwards. No `fsync`.
        case processCrash
        /// A power loss or kernel crash as well: each entry file and the directory are synced before a write
        /// returns (about 1 ms per write on an SSD).
        case powerLoss
    }

    /// The default bound on the bytes stored: 64 MiB.
    public static let defaultMaximumBytes = 64 << 20

    /// The default directory: `NetworkAgent/<process name>` in the user's caches directory (`~/.cache` on Linux,
    /// `~/Library/Caches` on Apple platforms), or in the temporary directory where there is none.
    public static var defaultDirectory: URL {
        let caches =
            FileManager.default.urls(for: .cachesDirectory, in: .userDomainMask).first
            ?? FileManager.default.temporaryDirectory
        return caches.appendingPathComponent("NetworkAgent", isDirectory: true)
            .appendingPathComponent(ProcessInfo.processInfo.processName, isDirectory: true)
    }

    private struct State {
        var index = CacheIndex<Void>()
        /// The number of the next temporary file (``partialPrefix``): unique within the process holding the lock.
        var nextPartial: UInt64 = 0
        /// Entries decoded from their files, with the exact bytes each was decoded from (``DecodedEntries``).
        var decoded: DecodedEntries
    }

    /// The name prefix of files being written in `entries/`; no identifier (64 hex digits) starts with it.
    package static let partialPrefix = ".partial-"

    /// The directory holding the entries.
    public let directory: URL
    /// The most bytes the entry files may take together; least recently used entries are evicted beyond it.
    public let maximumBytes: Int
    /// What a completed write survives.
    public let durability: Durability
    /// Entries found torn or corrupt when the index was rebuilt at creation, and deleted.
    public let corruptEntriesDroppedAtOpen: Int
    /// Why the store is unusable, or `nil` when it works. An unusable store finds nothing and refuses every write.
    public let unavailableReason: String?

    /// How a store holds its directory's lock.
    enum Lock {
        /// It holds the lock file open with the `flock` on it: alone (`sharedAs` is `nil`; it closes the file when
        /// it goes), or as one of the stores sharing it through ``DiskStoreRegistry`` under the key `sharedAs`.
        case held(descriptor: Int32, sharedAs: String?)
        /// The directory could not be set up; the store is unusable.
        case unavailable(DiskCachePlugin.Error)
    }

    /// How stale a file's modification time may be before a read sets it to now: one minute. The time stands for
    /// the entry's last use when the index is rebuilt at the next start; setting it on every read cost a system
    /// call and an inode update per hit, while the order of use within the process is kept in the index anyway.
    static let useRecordingInterval: TimeInterval = 60

    private let entriesPath: String
    /// Where earlier versions wrote temporary files (see the layout above).
    private let legacyTemporaryPath: String
    private let lock: Lock
    private let state: Locked<State>

    /// Opens (creating if needed) a store in a directory, takes its lock, removes leftovers of interrupted writes
    /// and rebuilds the index from the entries' keys.
    ///
    /// A directory that cannot be created or written does not throw: the store opens unusable, reports every write
    /// as failed, and the cache degrades to misses. Torn or corrupt entries found are deleted and each emits a
    /// `cache.error` event (`reason=corrupt_entry`) to the observers around this call.
    ///
    /// - Parameters:
    ///   - directory: The directory; created with mode 0700 if missing. Defaults to ``defaultDirectory``.
    ///   - maximumBytes: See ``maximumBytes``. Defaults to ``defaultMaximumBytes``.
    ///   - durability: See ``Durability``. Defaults to ``Durability/processCrash``.
    /// - Throws: ``DiskCachePlugin/Error`` with ``DiskCachePlugin/Error/Code/directoryLocked`` when another store holds the
    ///   directory.
    public convenience init(
        directory: URL = DiskStore.defaultDirectory,
        maximumBytes: Int = DiskStore.defaultMaximumBytes,
        durability: Durability = .processCrash
    ) throws(DiskCachePlugin.Error) {
        let lock = try Self.lock(directory)
        self.init(directory: directory, maximumBytes: maximumBytes, durability: durability, lock: lock)
    }

    /// Opens a store whose lock has been dealt with: removes leftovers of interrupted writes and rebuilds the
    /// index, unless the lock says the directory is unavailable.
    init(directory: URL, maximumBytes: Int, durability: Durability, lock: Lock) {
        self.directory = directory
        self.maximumBytes = max(0, maximumBytes)
        self.durability = durability
        self.lock = lock
        let root = directory.path
        entriesPath = root + "/entries"
        legacyTemporaryPath = root + "/tmp"

        var index = CacheIndex<Void>()
        var dropped = 0
        if case .unavailable(let error) = lock {
            unavailableReason = error.message
            corruptEntriesDroppedAtOpen = 0
            state = Locked(State(decoded: DecodedEntries(budget: 0)))
            Self.emit("error", ["reason": error.code.description])
            return
        }
        do throws(DiskCachePlugin.Error) {
            try FileIO.makeDirectory(entriesPath)
            unavailableReason = nil
        } catch {
            unavailableReason = error.message
            Self.emit("error", ["reason": error.code.description])
        }
        if unavailableReason == nil {
            if let leftovers = FileIO.names(in: legacyTemporaryPath) {
                for name in leftovers { FileIO.removeFile(legacyTemporaryPath + "/" + name) }
                FileIO.removeDirectory(legacyTemporaryPath)
            }
            (index, dropped) = Self.rebuildIndex(entriesPath)
        }
        corruptEntriesDroppedAtOpen = dropped
        state = Locked(State(index: index, decoded: DecodedEntries(budget: Self.decodedBudget(max(0, maximumBytes)))))
        for _ in 0..<dropped {
            Self.emit("error", ["reason": DiskCachePlugin.Error.Code.corruptEntry.description, "phase": "open"])
        }
        let evicted = state.withLock { evict(&$0, keeping: nil) }
        if evicted.entryCount > 0 {
            Self.emit("evicted", ["count": "\(evicted.entryCount)", "bytes": "\(evicted.totalBytes)"])
        }
    }

    deinit {
        // Closing the descriptor releases the flock; a shared lock is closed when its last store goes.
        guard case .held(let descriptor, let sharedAs) = lock else { return }
        if let sharedAs {
            DiskStoreRegistry.release(descriptor, sharedAs: sharedAs)
        } else {
            close(descriptor)
        }
    }

    /// Takes a directory's lock for a store of its own.
    ///
    /// - Throws: ``DiskCachePlugin/Error`` with ``DiskCachePlugin/Error/Code/directoryLocked`` when another store holds it.
    static func lock(_ directory: URL) throws(DiskCachePlugin.Error) -> Lock {
        do {
            return .held(descriptor: try acquireLock(directory.path), sharedAs: nil)
        } catch  where error.code == .unavailable {
            return .unavailable(error)
        } catch {
            throw error
        }
    }

    // MARK: ResponseStore

    /// Every stored variant of one resource for one user, each read whole, verified and marked as recently used.
    ///
    /// - Parameter primaryKey: A ``CacheKey/primary`` value.
    /// - Returns: The entries; empty when nothing is stored.
    /// - Throws: ``DiskCachePlugin/Error`` with ``DiskCachePlugin/Error/Code/corruptEntry`` when an entry failed
    ///   verification (every such entry has been deleted), or ``DiskCachePlugin/Error/Code/io``.
    public func variants(forPrimaryKey primaryKey: String) throws -> [CachedEntry] {
        // The index knows each variant's file name: no key is hashed on a lookup.
        // The entry decoded from the file's last bytes comes along, to be reused if the file still holds exactly them.
        let found = state.withLock { state -> [(id: String, key: CacheKey, generation: UInt64, decoded: Decoded?)] in
            state.index.ids(primary: primaryKey).compactMap { id in
                guard let node = state.index.nodes[id] else { return nil }
                state.index.touch(id: id)
                return (id, node.key, node.generation, state.decoded[id])
            }
        }
        var entries: [CachedEntry] = []
        var corrupt: DiskCachePlugin.Error?
        for (id, key, generation, decoded) in found {
            do throws(DiskCachePlugin.Error) {
                if let entry = try read(id: id, key: key, generation: generation, decoded: decoded) {
                    entries.append(entry)
                }
            } catch {
                guard error.code == .corruptEntry else { throw error }
                corrupt = error
            }
        }
        if let corrupt { throw corrupt }
        return entries
    }

    /// The keys of every stored variant of one resource for one user, from the index (no file is read).
    ///
    /// - Parameter primaryKey: A ``CacheKey/primary`` value.
    /// - Returns: The keys; empty when nothing is stored.
    public func variantKeys(forPrimaryKey primaryKey: String) -> [CacheKey] {
        state.withLock { state in state.index.ids(primary: primaryKey).compactMap { state.index.nodes[$0]?.key } }
    }

    /// Reads the entry the index holds under `id` (already marked as recently used there), verifying its checksum
    /// and key; `nil` when its file is gone. A corrupt entry is deleted and throws
    /// ``DiskCachePlugin/Error/Code/corruptEntry``.
    ///
    /// The file is read on every call: the file is the entry. When it holds exactly the bytes `decoded` was decoded
    /// from (compared byte for byte), that entry is the one decoding them would give, checksums and key included,
    /// and is returned without decoding them again.
    private func read(
        id: String,
        key: CacheKey,
        generation: UInt64,
        decoded: Decoded?
    ) throws(DiskCachePlugin.Error) -> CachedEntry? {
        let path = entriesPath + "/" + id
        guard let data = try FileIO.readFile(path, touchingOlderThan: Self.useRecordingInterval) else {
            // Deleted behind our back (a cache cleaner): forget it.
            dropFromIndex(id: id, generation: generation, deleteFile: false)
            return nil
        }
        if let decoded, decoded.bytes == data, decoded.entry.key == key { return decoded.entry }
        do {
            let entry = try EntryCodec.decode(data)
            guard entry.key == key else { throw EntryCodec.Failure.badKey }
            state.withLock { state in
                // Only while the index still files this write of the entry.
                guard state.index.nodes[id]?.generation == generation else { return }
                state.decoded.insert(Decoded(bytes: data, entry: entry), for: id)
            }
            return entry
        } catch {
            dropFromIndex(id: id, generation: generation, deleteFile: true)
            throw DiskCachePlugin.Error(.corruptEntry, "entry \(id) failed verification (\(error)) and was deleted")
        }
    }

    /// Writes an entry to a temporary file, renames it into place and evicts least recently used entries beyond
    /// ``maximumBytes``. An entry larger than ``maximumBytes`` is not stored; it removes any older entry under its
    /// key.
    ///
    /// - Parameters:
    ///   - entry: The entry.
    ///   - retention: Ignored: the store is bounded by size.
    /// - Returns: What was evicted.
    /// - Throws: ``DiskCachePlugin/Error`` (``DiskCachePlugin/Error/Code/io`` or ``DiskCachePlugin/Error/Code/unavailable``).
    @discardableResult
    public func store(_ entry: CachedEntry, retention: EntryRetention) throws -> ResponseStoreUsage {
        if let unavailableReason { throw DiskCachePlugin.Error(.unavailable, unavailableReason) }
        let data = EntryCodec.encode(entry)
        guard data.count <= maximumBytes else {
            // The newest response does not fit: at least stop serving an older one.
            remove(entry.key)
            return ResponseStoreUsage()
        }
        let id = entry.key.identifier
        let number = state.withLock { state in
            defer { state.nextPartial += 1 }
            return state.nextPartial
        }
        let temporary = entriesPath + "/" + Self.partialPrefix + String(number)
        try writeTemporary(temporary, data)
        let outcome = state.withLock { state -> Result<ResponseStoreUsage, DiskCachePlugin.Error> in
            do throws(DiskCachePlugin.Error) {
                try FileIO.move(temporary, to: entriesPath + "/" + id)
            } catch {
                FileIO.removeFile(temporary)
                return .failure(error)
            }
            state.index.insert(id: id, key: entry.key, value: (), bytes: data.count)
            state.decoded.remove(id)
            return .success(evict(&state, keeping: id))
        }
        let evicted = try outcome.get()
        if durability == .powerLoss { try FileIO.syncDirectory(entriesPath) }
        return evicted
    }

    /// Writes a temporary file; when the entries directory was removed (a cache cleaner), creates it again, once.
    private func writeTemporary(_ path: String, _ data: Data) throws(DiskCachePlugin.Error) {
        let sync = durability == .powerLoss
        let firstError: DiskCachePlugin.Error
        do throws(DiskCachePlugin.Error) {
            try FileIO.writeNewFile(path, data, sync: sync)
            return
        } catch {
            firstError = error
        }
        guard firstError.systemErrorNumber == ENOENT else { throw firstError }
        try FileIO.makeDirectory(entriesPath)
        try FileIO.writeNewFile(path, data, sync: sync)
    }

    /// Removes one entry, if it is stored.
    ///
    /// - Parameter key: The entry's key.
    public func remove(_ key: CacheKey) {
        state.withLock { state in
            // The entry's file name is found among its resource's variants in the index (usually none: a miss
            // that replaces nothing), instead of hashing the key.
            for id in state.index.ids(primary: key.primary) where state.index.nodes[id]?.key.variant == key.variant {
                state.index.remove(id: id)
                state.decoded.remove(id)
                FileIO.removeFile(entriesPath + "/" + id)
            }
        }
    }

    /// Removes every entry for a URL, whatever its method, user or variant.
    ///
    /// - Parameter url: A normalised URL, as in ``CacheKey/url``.
    /// - Returns: The number of entries removed.
    @discardableResult
    public func removeEntries(forURL url: String) -> Int {
        state.withLock { state in
            let ids = state.index.ids(url: url)
            for id in ids {
                state.index.remove(id: id)
                state.decoded.remove(id)
                FileIO.removeFile(entriesPath + "/" + id)
            }
            return ids.count
        }
    }

    /// Removes every entry, and any stray file in the entries directory.
    public func removeAll() {
        state.withLock { state in
            state.index = CacheIndex()
            state.decoded.removeAll()
            // Files being written are left to their writers, which rename them into place or remove them.
            for name in FileIO.names(in: entriesPath) ?? [] where !name.hasPrefix(Self.partialPrefix) {
                FileIO.removeFile(entriesPath + "/" + name)
            }
        }
    }

    /// The number of entries and the bytes their files take.
    public var usage: ResponseStoreUsage {
        state.withLock { ResponseStoreUsage(entryCount: $0.index.count, totalBytes: $0.index.totalBytes) }
    }

    // MARK: Internals

    /// The memory the decoded entries kept by ``read(id:key:generation:decoded:)`` may take: a quarter of the
    /// store's bound, at most 4 MiB.
    static func decodedBudget(_ maximumBytes: Int) -> Int {
        min(maximumBytes / 4, 4 << 20)
    }

    /// The number of decoded entries kept, for tests.
    var decodedEntryCount: Int {
        state.withLock { $0.decoded.count }
    }

    /// The identifiers of the entries, least recently used first. For tests.
    var identifiersFromOldest: [String] {
        state.withLock { $0.index.idsFromOldest }
    }

    private func dropFromIndex(id: String, generation: UInt64, deleteFile: Bool) {
        state.withLock { state in
            // Only if no newer write replaced the entry meanwhile (rename and index update happen under this lock).
            guard state.index.nodes[id]?.generation == generation else { return }
            state.index.remove(id: id)
            state.decoded.remove(id)
            if deleteFile { FileIO.removeFile(entriesPath + "/" + id) }
        }
    }

    /// Evicts least recently used entries until the total fits ``maximumBytes``; never the one just written.
    private func evict(_ state: inout State, keeping kept: String?) -> ResponseStoreUsage {
        var evicted = ResponseStoreUsage()
        while state.index.totalBytes > maximumBytes, let oldest = state.index.oldestID, oldest != kept,
            let node = state.index.remove(id: oldest)
        {
            state.decoded.remove(oldest)
            FileIO.removeFile(entriesPath + "/" + oldest)
            evicted.entryCount += 1
            evicted.totalBytes += node.bytes
        }
        return evicted
    }

    /// Opens the lock file and takes an exclusive, non-blocking `flock` on it.
    static func acquireLock(_ root: String) throws(DiskCachePlugin.Error) -> Int32 {
        try FileIO.makeDirectory(root)
        let path = root + "/lock"
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw DiskCachePlugin.Error(
                .unavailable,
                "cannot open \(path): \(FileIO.describe(errno))",
                systemErrorNumber: errno
            )
        }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            let code = errno
            let holder = FileIO.readRange(descriptor, count: 32, at: 0).map { String(decoding: $0, as: UTF8.self) }
            close(descriptor)
            if code == EWOULDBLOCK || code == EAGAIN {
                let pid = holder?.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
                throw DiskCachePlugin.Error(
                    .directoryLocked,
                    "the cache directory \(root) is in use by another DiskStore"
                        + (pid.isEmpty ? "" : " (process \(pid))") + "; give each store its own directory",
                    systemErrorNumber: code
                )
            }
            throw DiskCachePlugin.Error(
                .unavailable,
                "cannot lock \(path): \(FileIO.describe(code))",
                systemErrorNumber: code
            )
        }
        let pid = Data("\(getpid())\n".utf8)
        if ftruncate(descriptor, 0) == 0 {
            _ = pid.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, 0) }
        }
        return descriptor
    }

    /// Reads the prefix and key of every entry file; deletes files that do not verify.
    private static func rebuildIndex(_ entriesPath: String) -> (CacheIndex<Void>, dropped: Int) {
        struct Found {
            let id: String
            let key: CacheKey
            let bytes: Int
            let lastUse: Double
        }
        var found: [Found] = []
        var dropped = 0
        for name in FileIO.names(in: entriesPath) ?? [] {
            let path = entriesPath + "/" + name
            if name.hasPrefix(partialPrefix) {
                // A write the previous process did not finish: never an entry, so not counted as damage.
                FileIO.removeFile(path)
                continue
            }
            guard let (key, bytes, lastUse) = readHead(path), key.identifier == name else {
                FileIO.removeFile(path)
                dropped += 1
                continue
            }
            found.append(Found(id: name, key: key, bytes: bytes, lastUse: lastUse))
        }
        var index = CacheIndex<Void>(minimumCapacity: found.count)
        for item in found.sorted(by: { ($0.lastUse, $0.id) < ($1.lastUse, $1.id) }) {
            index.insert(id: item.id, key: item.key, value: (), bytes: item.bytes)
        }
        return (index, dropped)
    }

    /// The key, file size and modification time of an entry file whose prefix, key and length verify.
    private static func readHead(_ path: String) -> (CacheKey, Int, Double)? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFREG,
            let prefixBytes = FileIO.readRange(descriptor, count: EntryCodec.prefixLength, at: 0),
            let prefix = try? EntryCodec.decodePrefix(prefixBytes),
            Int(status.st_size) == prefix.totalLength,
            let keyBytes = FileIO.readRange(descriptor, count: prefix.keyLength, at: EntryCodec.prefixLength),
            let key = try? EntryCodec.decodeKey(prefixBytes: prefixBytes, prefix: prefix, keyBytes: keyBytes)
        else { return nil }
        #if canImport(Darwin)
        let modified = Double(status.st_mtimespec.tv_sec) + Double(status.st_mtimespec.tv_nsec) / 1e9
        #else
        let modified = Double(status.st_mtim.tv_sec) + Double(status.st_mtim.tv_nsec) / 1e9
        #endif
        return (key, prefix.totalLength, modified)
    }

    private static func emit(_ name: String, _ attributes: [String: String]) {
        NetworkAgentEvents.emit(
            NetworkAgentEvent(source: DiskCachePlugin.eventSource, name: name, attributes: attributes)
        )
    }
}
