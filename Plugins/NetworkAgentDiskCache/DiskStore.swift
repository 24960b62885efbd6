import Foundation
import NetworkAgent

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The default ``ResponseStore``: entries appended to a log of segment files in a directory, bounded in bytes with
/// least-recently-used eviction, safe against a crash at any moment.
///
/// Layout of ``directory``:
/// - `lock` — held with `flock(LOCK_EX)` for the store's lifetime; a second store on the same directory, in this
///   process or another, fails with ``DiskCachePlugin/Error/Code/directoryLocked``. The kernel releases the lock when the
///   process dies, however it dies. Plugins created on a directory
///   (``DiskCachePlugin/init(directory:maximumBytes:durability:configuration:)``) share one store per directory
///   within a process instead; a store you create yourself is yours alone, so hand that same instance to every
///   plugin that should use it.
/// - `entries/log-<n>` — the log: segments numbered upwards, kept open; each write appends one record to the
///   highest with one `pwrite(2)`, and a new segment starts when it passes a size (a quarter of ``maximumBytes``,
///   64 KiB to 8 MiB). A record is an entry in the format of `Docs/DiskCache.md` (a checksummed key, metadata and
///   body) or a small checksummed mark: a removal, a use (recorded at most once a minute per entry), or a clear.
///   Creating a file per entry cost the kernel an inode allocation per write, half of a storing request's CPU.
/// - `entries/<identifier>`, `entries/.partial-<n>`, `tmp/` — the layout of earlier versions (one file per entry,
///   written to a temporary file and renamed): entries are imported into the log, in their order of use, and
///   deleted when a store opens; leftovers of interrupted writes are deleted.
///
/// At start the index is rebuilt by replaying the segments in order, checking each entry record's prefix and key
/// (and the last record of the log whole). An interrupted append leaves an incomplete last record, which is cut off
/// (it was never an entry, so it is not counted as damage); a record that does not verify elsewhere is counted in
/// ``corruptEntriesDroppedAtOpen``, and its segment is cut there. Every read verifies the whole entry's checksum
/// before it is served; a corrupt entry is forgotten (a removal is recorded) and reported. Lookups are O(1) in the
/// number of entries. When the segments hold more than twice ``maximumBytes`` plus a segment, the live entries are
/// copied, least recently used first, into a new segment and the older segments deleted; a crash in between
/// leaves copies that replay over identical originals.
///
/// Durability: with ``Durability/processCrash`` (the default) nothing is synced — an entry written before a process
/// crash is there afterwards, because the kernel holds the written pages; after a power loss an entry may be
/// missing or torn, and the checksums drop torn ones. ``Durability/powerLoss`` syncs the segment (`fdatasync`)
/// before a write returns, and the directory when a segment is created, for caches that an app relies on offline.
///
/// Failures after creation never throw out of a request: an unwritable or vanished directory or a full disk makes
/// writes fail with ``DiskCachePlugin/Error/Code/io`` (the plugin reports it as an event and carries on), and a missing
/// directory is created again on the next write (the entries it held are forgotten).
public final class DiskStore: ResponseStore {
    /// What a completed write survives.
    public enum Durability: Sendable, Hashable {
        /// A crash or kill of the process: written entries are complete and visible afterwards. No `fsync`.
        case processCrash
        /// A power loss or kernel crash as well: the log is synced before a write returns (about 1 ms per write on
        /// an SSD).
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

    /// The name prefix of the files earlier versions wrote entries to before renaming them into place; no
    /// identifier (64 hex digits) starts with it. Deleted when a store opens.
    package static let partialPrefix = ".partial-"

    /// The directory holding the entries.
    public let directory: URL
    /// The most bytes the entries may take together; least recently used entries are evicted beyond it.
    public let maximumBytes: Int
    /// What a completed write survives.
    public let durability: Durability
    /// Records found torn or corrupt when the index was rebuilt at creation (and entry files of the earlier
    /// layout that did not verify), dropped.
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

    /// How long after an entry's last recorded use a read records another in the log: one minute. The order of use
    /// within the process is kept in the index anyway; the log only needs it for the next start.
    static let useRecordingInterval: TimeInterval = 60

    /// The log, which owns the lock.
    let log: LogStore

    /// Opens (creating if needed) a store in a directory, takes its lock, replays the log, imports entries of the
    /// earlier one-file-per-entry layout and removes leftovers of interrupted writes.
    ///
    /// A directory that cannot be created or written does not throw: the store opens unusable, reports every write
    /// as failed, and the cache degrades to misses. Torn or corrupt records found are dropped and each emits a
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

    /// Opens a store whose lock has been dealt with (the log takes it over and releases it when it goes).
    convenience init(directory: URL, maximumBytes: Int, durability: Durability, lock: Lock) {
        self.init(
            log: LogStore(
                directory: directory,
                maximumBytes: maximumBytes,
                durability: durability,
                useRecordingInterval: Self.useRecordingInterval,
                lock: lock
            )
        )
    }

    /// A store over an open log.
    init(log: LogStore) {
        self.log = log
        directory = log.directory
        maximumBytes = log.maximumBytes
        durability = log.durability
        corruptEntriesDroppedAtOpen = log.corruptEntriesDroppedAtOpen
        unavailableReason = log.unavailableReason
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
    ///   verification (every such entry has been forgotten), or ``DiskCachePlugin/Error/Code/io``.
    public func variants(forPrimaryKey primaryKey: String) throws -> [CachedEntry] {
        try log.variants(forPrimaryKey: primaryKey)
    }

    /// The keys of every stored variant of one resource for one user, from the index (nothing is read).
    ///
    /// - Parameter primaryKey: A ``CacheKey/primary`` value.
    /// - Returns: The keys; empty when nothing is stored.
    public func variantKeys(forPrimaryKey primaryKey: String) -> [CacheKey] {
        log.variantKeys(forPrimaryKey: primaryKey)
    }

    /// Appends an entry to the log and evicts least recently used entries beyond ``maximumBytes``. An entry larger
    /// than ``maximumBytes`` is not stored; it removes any older entry under its key.
    ///
    /// - Parameters:
    ///   - entry: The entry.
    ///   - retention: Ignored: the store is bounded by size.
    /// - Returns: What was evicted.
    /// - Throws: ``DiskCachePlugin/Error`` (``DiskCachePlugin/Error/Code/io`` or ``DiskCachePlugin/Error/Code/unavailable``).
    @discardableResult
    public func store(_ entry: CachedEntry, retention: EntryRetention) throws -> ResponseStoreUsage {
        try log.store(entry, retention: retention)
    }

    /// Removes one entry, if it is stored.
    ///
    /// - Parameter key: The entry's key.
    public func remove(_ key: CacheKey) {
        log.remove(key)
    }

    /// Removes every entry for a URL, whatever its method, user or variant.
    ///
    /// - Parameter url: A normalised URL, as in ``CacheKey/url``.
    /// - Returns: The number of entries removed.
    @discardableResult
    public func removeEntries(forURL url: String) -> Int {
        log.removeEntries(forURL: url)
    }

    /// Removes every entry, deleting the log's segments.
    public func removeAll() {
        log.removeAll()
    }

    /// The number of entries and the bytes their records take.
    public var usage: ResponseStoreUsage {
        log.usage
    }

    // MARK: Internals

    /// The memory the decoded entries kept by reads may take: a quarter of the store's bound, at most 4 MiB.
    static func decodedBudget(_ maximumBytes: Int) -> Int {
        min(maximumBytes / 4, 4 << 20)
    }

    /// The number of decoded entries kept, for tests.
    var decodedEntryCount: Int { log.decodedEntryCount }

    /// The identifiers of the entries, least recently used first. For tests.
    var identifiersFromOldest: [String] { log.identifiersFromOldest }

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
}
