import Foundation
import NetworkAgent

#if canImport(Glibc)
import Glibc
#if canImport(SwiftOverlayShims)
import SwiftOverlayShims
#endif
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A log-structured ``ResponseStore``: entries are appended to a few segment files kept open, instead of each
/// being a file of its own. ``DiskStore`` is its public face.
///
/// Creating a file costs the kernel an inode allocation, which on a busy ext4 file system (one that deletes many
/// files) searches past recently deleted inodes and took half a storing request's CPU. Appending to an open file
/// costs one `pwrite(2)` into the page cache.
///
/// Layout of ``directory`` (the lock and the `entries/` directory are those of ``DiskStore``):
/// - `lock` — the `flock` held for the store's lifetime, as for ``DiskStore``.
/// - `entries/log-<n>` — segments, numbered upwards; records are appended to the highest one, and a new one starts
///   when it passes ``segmentLimit``. A record is an entry in the ``EntryCodec`` format (magic `NACE`, checksummed
///   key and whole), or a mark (magic `NACM`): one byte kind (removal, use, clear), three zero bytes, a UInt32
///   payload length, the payload (an entry's identifier, or nothing for a clear) and a CRC-32 of everything
///   before it. Reading the segments in order replays the store: an entry record files (or replaces) its
///   identifier as the most recently used, a use mark makes it the most recently used, a removal forgets it, a
///   clear forgets everything before it.
/// - `entries/<identifier>` — entries of the one-file-per-entry layout of ``DiskStore``: imported (appended to the
///   log, oldest use first, and deleted) when a store opens. Leftovers `entries/.partial-<n>` are deleted.
///
/// Crash safety: a record is appended with one `pwrite` at the segment's end; an interrupted append leaves a
/// short last record (a SIGKILL stops the write at a page boundary of the file, which can fall anywhere in the
/// record, its fixed prefix included), which the next open finds (too short for its prefix or its declared
/// length) and cuts off without counting it. Only the key checksum of each entry record is checked at open, except for the last record of the last
/// segment, which is verified whole (a power loss can leave it full-length and wrong: counted as damage); every
/// read verifies the whole entry before it is served. A record that fails elsewhere is counted as damage in
/// ``corruptEntriesDroppedAtOpen`` and the segment is cut there, since what follows cannot be framed; as a removal
/// could be among the lost records, everything replayed before the damage is forgotten too.
///
/// Compaction: when the segments hold more than twice ``maximumBytes`` plus a segment, the live entries are
/// copied, least recently used first, into a new segment and the older segments are deleted. A crash in between
/// leaves both; the copies come later in the replay and supersede the originals, which are the same bytes.
package final class LogStore: ResponseStore {
    /// Where an entry's record is.
    struct Location {
        let segment: Segment
        let offset: Int
        let length: Int
        /// When a use of the entry was last recorded in the log (its write counts as one), seconds since 1970.
        var useRecorded: Double
    }

    /// An open segment. The descriptor is closed when the last holder lets go: a read that took a segment before
    /// a compaction deleted it still reads from it.
    final class Segment: Sendable {
        let number: Int
        let descriptor: Int32

        init(number: Int, descriptor: Int32) {
            self.number = number
            self.descriptor = descriptor
        }

        deinit { close(descriptor) }
    }

    private struct State {
        var index = CacheIndex<Location>()
        /// Every segment, by number; the highest is appended to.
        var segments: [Int: Segment] = [:]
        var current: Segment?
        /// The current segment's length: where the next record goes.
        var currentLength = 0
        /// The bytes of all segments together.
        var logBytes = 0
        var decoded: DecodedEntries
        /// The highest segment number used: a new segment takes the next, so that numbers only go up and a stale
        /// segment a crash left behind never follows a newer one in the replay.
        var highestNumber = 0
    }

    /// Record kinds of a mark.
    enum MarkKind: UInt8 {
        case removal = 1
        case use = 2
        case clear = 3
    }

    static let markMagic: [UInt8] = Array("NACM".utf8)
    static let markHeaderLength = 12
    static let segmentPrefix = "log-"

    let directory: URL
    let maximumBytes: Int
    let durability: DiskStore.Durability
    let corruptEntriesDroppedAtOpen: Int
    let unavailableReason: String?
    /// The length past which appends go to a new segment.
    let segmentLimit: Int
    /// How long after an entry's last recorded use a read records another (a use mark): a minute by default.
    let useRecordingInterval: TimeInterval

    private let entriesPath: String
    private let lock: DiskStore.Lock
    private let state: Locked<State>

    /// Opens (creating if needed) a store in a directory, takes its lock, replays the log and imports entries of
    /// the one-file-per-entry layout.
    ///
    /// - Throws: ``DiskCachePlugin/Error`` with ``DiskCachePlugin/Error/Code/directoryLocked`` when another store holds
    ///   the directory.
    package convenience init(
        directory: URL,
        maximumBytes: Int = DiskStore.defaultMaximumBytes,
        durability: DiskStore.Durability = .processCrash,
        useRecordingInterval: TimeInterval = DiskStore.useRecordingInterval
    ) throws(DiskCachePlugin.Error) {
        let lock = try DiskStore.lock(directory)
        self.init(
            directory: directory,
            maximumBytes: maximumBytes,
            durability: durability,
            useRecordingInterval: useRecordingInterval,
            lock: lock
        )
    }

    init(
        directory: URL,
        maximumBytes: Int,
        durability: DiskStore.Durability,
        useRecordingInterval: TimeInterval,
        lock: DiskStore.Lock
    ) {
        self.directory = directory
        self.maximumBytes = max(0, maximumBytes)
        self.durability = durability
        self.useRecordingInterval = useRecordingInterval
        self.lock = lock
        segmentLimit = min(max(self.maximumBytes / 4, 64 << 10), 8 << 20)
        entriesPath = directory.path + "/entries"
        var state = State(decoded: DecodedEntries(budget: DiskStore.decodedBudget(max(0, maximumBytes))))
        var failure: DiskCachePlugin.Error?
        var dropped = 0
        if case .unavailable(let error) = lock {
            failure = error
        } else {
            do throws(DiskCachePlugin.Error) {
                try FileIO.makeDirectory(entriesPath)
                dropped = try Self.openLog(
                    entriesPath,
                    into: &state,
                    durability: durability,
                    segmentLimit: segmentLimit
                )
            } catch {
                failure = error
            }
        }
        unavailableReason = failure?.message
        corruptEntriesDroppedAtOpen = dropped
        self.state = Locked(state)
        if let failure {
            Self.emit("error", ["reason": failure.code.description])
            return
        }
        for _ in 0..<dropped {
            Self.emit("error", ["reason": DiskCachePlugin.Error.Code.corruptEntry.description, "phase": "open"])
        }
        let evicted = self.state.withLock { state in
            let evicted = evict(&state, keeping: nil)
            compactIfNeeded(&state)
            return evicted
        }
        if evicted.entryCount > 0 {
            Self.emit("evicted", ["count": "\(evicted.entryCount)", "bytes": "\(evicted.totalBytes)"])
        }
    }

    deinit {
        guard case .held(let descriptor, let sharedAs) = lock else { return }
        if let sharedAs {
            DiskStoreRegistry.release(descriptor, sharedAs: sharedAs)
        } else {
            close(descriptor)
        }
    }

    // MARK: ResponseStore

    package func variants(forPrimaryKey primaryKey: String) throws -> [CachedEntry] {
        let now = Date().timeIntervalSince1970
        let found = state.withLock {
            state -> [(id: String, key: CacheKey, generation: UInt64, at: Location, decoded: Decoded?)] in
            // The primary key is looked up (hashed) once, for the check and the entries.
            let ids = state.index.ids(primary: primaryKey)
            if forgetIfDeleted(&state, ids) { return [] }
            var uses: [String] = []
            let found = ids.compactMap {
                id -> (id: String, key: CacheKey, generation: UInt64, at: Location, decoded: Decoded?)? in
                guard let node = state.index.nodes[id] else { return nil }
                state.index.touch(id: id)
                if now - node.value.useRecorded >= useRecordingInterval {
                    uses.append(id)
                    state.index.setValue(id: id) { $0.useRecorded = now }
                }
                return (id, node.key, node.generation, node.value, state.decoded[id])
            }
            if !uses.isEmpty { try? appendMarks(&state, .use, uses) }
            return found
        }
        var entries: [CachedEntry] = []
        var corrupt: DiskCachePlugin.Error?
        for item in found {
            do throws(DiskCachePlugin.Error) {
                entries.append(try read(item.id, item.key, item.generation, item.at, item.decoded))
            } catch {
                guard error.code == .corruptEntry else { throw error }
                corrupt = error
            }
        }
        if let corrupt { throw corrupt }
        return entries
    }

    package func variantKeys(forPrimaryKey primaryKey: String) -> [CacheKey] {
        state.withLock { state in state.index.ids(primary: primaryKey).compactMap { state.index.nodes[$0]?.key } }
    }

    /// Reads and verifies an entry's record; a record that does not verify is forgotten (a removal mark is
    /// appended) and throws ``DiskCachePlugin/Error/Code/corruptEntry``.
    private func read(
        _ id: String,
        _ key: CacheKey,
        _ generation: UInt64,
        _ location: Location,
        _ decoded: Decoded?
    ) throws(DiskCachePlugin.Error) -> CachedEntry {
        guard let data = FileIO.readRange(location.segment.descriptor, count: location.length, at: location.offset)
        else {
            throw FileIO.ioError("read", entriesPath + "/" + Self.segmentName(location.segment.number))
        }
        if let decoded, decoded.bytes == data, decoded.entry.key == key { return decoded.entry }
        do {
            let entry = try EntryCodec.decode(data)
            guard entry.key == key else { throw EntryCodec.Failure.badKey }
            state.withLock { state in
                guard state.index.nodes[id]?.generation == generation else { return }
                state.decoded.insert(Decoded(bytes: data, entry: entry), for: id)
            }
            return entry
        } catch {
            state.withLock { state in
                guard state.index.nodes[id]?.generation == generation else { return }
                state.index.remove(id: id)
                state.decoded.remove(id)
                try? appendMarks(&state, .removal, [id])
            }
            throw DiskCachePlugin.Error(.corruptEntry, "entry \(id) failed verification (\(error)) and was dropped")
        }
    }

    @discardableResult
    package func store(_ entry: CachedEntry, retention: EntryRetention) throws -> ResponseStoreUsage {
        if let unavailableReason { throw DiskCachePlugin.Error(.unavailable, unavailableReason) }
        // Written from the encoder's own buffer, not a `Data` copy of it.
        let data = EntryCodec.encodedBytes(entry)
        guard data.count <= maximumBytes else {
            remove(entry.key)
            return ResponseStoreUsage()
        }
        let id = entry.key.identifier
        let now = Date().timeIntervalSince1970
        let outcome = state.withLock { state -> Result<ResponseStoreUsage, DiskCachePlugin.Error> in
            do throws(DiskCachePlugin.Error) {
                let (segment, offset) = try append(&state, data)
                state.index.insert(
                    id: id,
                    key: entry.key,
                    value: Location(segment: segment, offset: offset, length: data.count, useRecorded: now),
                    bytes: data.count
                )
                state.decoded.remove(id)
                let evicted = evict(&state, keeping: id)
                compactIfNeeded(&state)
                return .success(evicted)
            } catch {
                return .failure(error)
            }
        }
        return try outcome.get()
    }

    package func remove(_ key: CacheKey) {
        state.withLock { state in
            var removed: [String] = []
            for id in state.index.ids(primary: key.primary) where state.index.nodes[id]?.key.variant == key.variant {
                state.index.remove(id: id)
                state.decoded.remove(id)
                removed.append(id)
            }
            if !removed.isEmpty { try? appendMarks(&state, .removal, removed) }
        }
    }

    @discardableResult
    package func removeEntries(forURL url: String) -> Int {
        state.withLock { state in
            let ids = Array(state.index.ids(url: url))
            for id in ids {
                state.index.remove(id: id)
                state.decoded.remove(id)
            }
            if !ids.isEmpty { try? appendMarks(&state, .removal, ids) }
            return ids.count
        }
    }

    /// Removes every entry: a clear mark is appended (so that a crash before the segments are gone still forgets
    /// them), then every segment is deleted and the next write starts a new one.
    package func removeAll() {
        state.withLock { state in
            guard unavailableReason == nil else { return }
            // The clear goes into the highest segment, deleted last: a crash in between leaves it in force.
            if !state.segments.isEmpty { try? appendMarks(&state, .clear, [""]) }
            state.index = CacheIndex()
            state.decoded.removeAll()
            for number in state.segments.keys.sorted() {
                FileIO.removeFile(entriesPath + "/" + Self.segmentName(number))
            }
            // The next append starts a new segment; numbers keep going up (``State/highestNumber``).
            forgetEverything(&state)
        }
    }

    package var usage: ResponseStoreUsage {
        state.withLock { ResponseStoreUsage(entryCount: $0.index.count, totalBytes: $0.index.totalBytes) }
    }

    // MARK: For tests

    var identifiersFromOldest: [String] { state.withLock { $0.index.idsFromOldest } }
    var decodedEntryCount: Int { state.withLock { $0.decoded.count } }
    var logBytes: Int { state.withLock { $0.logBytes } }
    var segmentNumbers: [Int] { state.withLock { $0.segments.keys.sorted() } }

    // MARK: Appending

    static func segmentName(_ number: Int) -> String { segmentPrefix + String(number) }

    private static func createSegment(
        _ entriesPath: String,
        number: Int,
        durability: DiskStore.Durability
    ) throws(DiskCachePlugin.Error) -> Segment {
        let path = entriesPath + "/" + segmentName(number)
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw FileIO.ioError("create", path) }
        if durability == .powerLoss { try FileIO.syncDirectory(entriesPath) }
        return Segment(number: number, descriptor: descriptor)
    }

    /// Appends one record at the current segment's end (starting a new segment when the current one is full, or
    /// when its file was deleted behind the store, in which case everything it held is forgotten).
    private func append(
        _ state: inout State,
        _ data: some ContiguousBytes & Collection<UInt8>
    ) throws(DiskCachePlugin.Error) -> (Segment, Int) {
        if let current = state.current {
            if FileIO.isUnlinked(current.descriptor) {
                // A cache cleaner removed the segment (or the whole directory): what it held is gone.
                forgetEverything(&state)
            }
        }
        if state.current == nil || state.currentLength >= segmentLimit {
            let next = state.highestNumber + 1
            let segment: Segment
            do throws(DiskCachePlugin.Error) {
                segment = try Self.createSegment(entriesPath, number: next, durability: durability)
            } catch {
                guard error.systemErrorNumber == ENOENT else { throw error }
                try FileIO.makeDirectory(entriesPath)
                segment = try Self.createSegment(entriesPath, number: next, durability: durability)
            }
            state.segments[next] = segment
            state.highestNumber = next
            state.current = segment
            state.currentLength = 0
        }
        guard let segment = state.current else { throw DiskCachePlugin.Error(.io, "no segment to write to") }
        let offset = state.currentLength
        if let code = FileIO.writeAll(segment.descriptor, data, at: offset) {
            // Leave no torn record behind for later appends to follow.
            _ = ftruncate(segment.descriptor, off_t(offset))
            throw FileIO.ioError("write", entriesPath + "/" + Self.segmentName(segment.number), code: code)
        }
        if durability == .powerLoss, fdatasync(segment.descriptor) != 0 {
            throw FileIO.ioError("fdatasync", entriesPath + "/" + Self.segmentName(segment.number))
        }
        state.currentLength += data.count
        state.logBytes += data.count
        return (segment, offset)
    }

    /// Whether a segment holding one of `ids` (the variants of a primary key) was deleted behind the store (a cache
    /// cleaner); then everything is forgotten, as the files it was read from are gone. One `statx` per segment
    /// involved.
    private func forgetIfDeleted(_ state: inout State, _ ids: IDs) -> Bool {
        for id in ids {
            guard let segment = state.index.nodes[id]?.value.segment else { continue }
            if FileIO.isUnlinked(segment.descriptor) {
                forgetEverything(&state)
                return true
            }
        }
        return false
    }

    private func forgetEverything(_ state: inout State) {
        state.index = CacheIndex()
        state.decoded.removeAll()
        state.segments = [:]
        state.logBytes = 0
        state.currentLength = 0
        state.current = nil
    }

    static func mark(_ kind: MarkKind, _ payload: String) -> Data {
        var writer = EntryCodec.Writer()
        writer.bytes += markMagic + [kind.rawValue, 0, 0, 0]
        writer.string(payload)
        var crc = CRC32()
        writer.bytes.withUnsafeBytes { crc.update($0) }
        writer.integer(UInt64(crc.value), bytes: 4)
        return Data(writer.bytes)
    }

    private func appendMarks(_ state: inout State, _ kind: MarkKind, _ ids: [String]) throws(DiskCachePlugin.Error) {
        guard unavailableReason == nil else { return }
        var data = Data()
        for id in ids { data += Self.mark(kind, id) }
        _ = try append(&state, data)
    }

    // MARK: Eviction and compaction

    private func evict(_ state: inout State, keeping kept: String?) -> ResponseStoreUsage {
        var evicted = ResponseStoreUsage()
        var ids: [String] = []
        while state.index.totalBytes > maximumBytes, let oldest = state.index.oldestID, oldest != kept,
            let node = state.index.remove(id: oldest)
        {
            state.decoded.remove(oldest)
            ids.append(oldest)
            evicted.entryCount += 1
            evicted.totalBytes += node.bytes
        }
        // Without the marks a restart would replay the evicted entries and evict them again.
        if !ids.isEmpty { try? appendMarks(&state, .removal, ids) }
        return evicted
    }

    private var compactionThreshold: Int { 2 * maximumBytes + segmentLimit }

    /// Copies the live entries, least recently used first, into a new segment and deletes the older ones, when
    /// the log is over ``compactionThreshold``. A failure leaves the log as it was (the new segment is deleted).
    private func compactIfNeeded(_ state: inout State) {
        guard state.logBytes > compactionThreshold else { return }
        let number = state.highestNumber + 1
        guard let segment = try? Self.createSegment(entriesPath, number: number, durability: durability) else { return }
        var moved: [(String, Location)] = []
        var buffer = Data()
        var length = 0
        var failed = false
        func flush() {
            guard !buffer.isEmpty, !failed else { return }
            if FileIO.writeAll(segment.descriptor, buffer, at: length - buffer.count) != nil { failed = true }
            buffer.removeAll(keepingCapacity: true)
        }
        var unreadable: [String] = []
        for id in state.index.idsFromOldest {
            guard let location = state.index.nodes[id]?.value else { continue }
            guard
                let bytes = FileIO.readRange(location.segment.descriptor, count: location.length, at: location.offset),
                bytes.count == location.length
            else {
                unreadable.append(id)
                continue
            }
            moved.append(
                (id, Location(segment: segment, offset: length, length: bytes.count, useRecorded: location.useRecorded))
            )
            buffer += bytes
            length += bytes.count
            if buffer.count >= 1 << 20 { flush() }
        }
        flush()
        if !failed, durability == .powerLoss, fdatasync(segment.descriptor) != 0 { failed = true }
        guard !failed else {
            FileIO.removeFile(entriesPath + "/" + Self.segmentName(number))
            return
        }
        for id in unreadable {
            state.index.remove(id: id)
            state.decoded.remove(id)
        }
        for (id, location) in moved { state.index.setValue(id: id) { $0 = location } }
        for old in state.segments.keys.sorted() { FileIO.removeFile(entriesPath + "/" + Self.segmentName(old)) }
        state.segments = [number: segment]
        state.highestNumber = number
        state.current = segment
        state.currentLength = length
        state.logBytes = length
    }

    // MARK: Opening

    /// Replays the segments into `state`, truncating torn tails, imports the one-file-per-entry layout and opens
    /// the segment to append to. Returns the number of damaged records and files found.
    private static func openLog(
        _ entriesPath: String,
        into state: inout State,
        durability: DiskStore.Durability,
        segmentLimit: Int
    ) throws(DiskCachePlugin.Error) -> Int {
        // Where versions before the one-file-per-entry layout's renames within `entries/` wrote temporary files.
        let legacyTemporaryPath = String(entriesPath.dropLast("/entries".count)) + "/tmp"
        if let leftovers = FileIO.names(in: legacyTemporaryPath) {
            for name in leftovers { FileIO.removeFile(legacyTemporaryPath + "/" + name) }
            FileIO.removeDirectory(legacyTemporaryPath)
        }
        var segmentNumbers: [Int] = []
        var legacy: [String] = []
        var dropped = 0
        for name in FileIO.names(in: entriesPath) ?? [] {
            let path = entriesPath + "/" + name
            if name.hasPrefix(DiskStore.partialPrefix) {
                FileIO.removeFile(path)
            } else if name.hasPrefix(segmentPrefix), let number = Int(name.dropFirst(segmentPrefix.count)),
                segmentName(number) == name
            {
                segmentNumbers.append(number)
            } else {
                legacy.append(name)
            }
        }
        segmentNumbers.sort()
        let now = Date().timeIntervalSince1970
        for (position, number) in segmentNumbers.enumerated() {
            let path = entriesPath + "/" + segmentName(number)
            let descriptor = open(path, O_RDWR | O_CLOEXEC)
            guard descriptor >= 0 else { throw FileIO.ioError("open", path) }
            let segment = Segment(number: number, descriptor: descriptor)
            // Read through the descriptor just opened, not by opening the path a second time.
            var status = stat()
            guard fstat(descriptor, &status) == 0,
                let bytes = FileIO.readRange(descriptor, count: Int(status.st_size), at: 0)
            else { throw FileIO.ioError("read", path) }
            let isLast = position == segmentNumbers.count - 1
            let replay = replay(bytes, segment: segment, isLast: isLast, now: now, into: &state.index)
            dropped += replay.damaged
            if replay.lostRecords { state.index = CacheIndex() }
            if replay.validLength < bytes.count { _ = ftruncate(descriptor, off_t(replay.validLength)) }
            state.segments[number] = segment
            state.highestNumber = number
            state.logBytes += replay.validLength
            if isLast {
                state.current = segment
                state.currentLength = replay.validLength
            }
        }
        state.decoded.removeAll()
        if state.current == nil {
            let number = state.highestNumber + 1
            let segment = try createSegment(entriesPath, number: number, durability: durability)
            state.segments[number] = segment
            state.highestNumber = number
            state.current = segment
        }
        dropped += importLegacy(entriesPath, legacy, into: &state, now: now, segmentLimit: segmentLimit)
        return dropped
    }

    struct Replay {
        var validLength = 0
        var damaged = 0
        /// Whether records after a damaged one were lost. A removal among them could have forgotten an entry
        /// replayed before, so everything replayed up to there is forgotten too: a damaged log may lose entries,
        /// never bring a removed one back.
        var lostRecords = false
    }

    /// Replays one segment's records into an index. Stops at the first record that cannot be framed: a torn
    /// tail (the last segment's last record, incomplete or failing its checksum) is not damage; anything else is.
    static func replay(
        _ bytes: Data,
        segment: Segment,
        isLast: Bool,
        now: Double,
        into index: inout CacheIndex<Location>
    ) -> Replay {
        var result = Replay()
        var offset = 0
        let count = bytes.count
        let start = bytes.startIndex
        while offset < count {
            let remaining = count - offset
            let record = bytes[(start + offset)...]
            func damaged() -> Replay {
                var ended = result
                ended.damaged += 1
                ended.lostRecords = true
                return ended
            }
            func torn() -> Replay {
                // Incomplete: an interrupted append if nothing follows it in the last segment.
                var ended = result
                if !isLast {
                    ended.damaged += 1
                    ended.lostRecords = true
                }
                return ended
            }
            guard remaining >= 8 else { return torn() }
            let magic = Array(record.prefix(4))
            if magic == EntryCodec.magic {
                // A kill stops a write at a page boundary of the file, which can fall inside the fixed prefix.
                guard remaining >= EntryCodec.prefixLength else { return torn() }
                guard let prefix = try? EntryCodec.decodePrefix(record) else { return damaged() }
                guard prefix.totalLength <= remaining else {
                    // Short: torn, if its lengths are genuine (its key verifies); damaged otherwise.
                    let keyEnd = EntryCodec.prefixLength + prefix.keyLength
                    guard keyEnd <= remaining else { return torn() }
                    let keyStart = record.startIndex + EntryCodec.prefixLength
                    let verified = try? EntryCodec.decodeKey(
                        prefixBytes: record.prefix(EntryCodec.prefixLength),
                        prefix: prefix,
                        keyBytes: record[keyStart..<record.startIndex + keyEnd]
                    )
                    return verified == nil ? damaged() : torn()
                }
                let keyStart = record.startIndex + EntryCodec.prefixLength
                guard
                    let key = try? EntryCodec.decodeKey(
                        prefixBytes: record.prefix(EntryCodec.prefixLength),
                        prefix: prefix,
                        keyBytes: record[keyStart..<keyStart + prefix.keyLength]
                    )
                else { return damaged() }
                let isTail = isLast && offset + prefix.totalLength == count
                if isTail, (try? EntryCodec.decode(record.prefix(prefix.totalLength))) == nil {
                    // The last append, complete in length but not in content (a power loss): torn.
                    result.damaged += 1
                    return result
                }
                let id = key.identifier
                index.insert(
                    id: id,
                    key: key,
                    value: Location(segment: segment, offset: offset, length: prefix.totalLength, useRecorded: now),
                    bytes: prefix.totalLength
                )
                offset += prefix.totalLength
            } else if magic == markMagic {
                let header = Array(record.prefix(markHeaderLength))
                guard header.count == markHeaderLength else { return torn() }
                let payloadLength = Int(EntryCodec.littleEndian(record, from: record.startIndex + 8, count: 4))
                guard payloadLength <= 1 << 16, let kind = MarkKind(rawValue: header[4]) else { return damaged() }
                let total = markHeaderLength + payloadLength + 4
                guard total <= remaining else { return torn() }
                let body = record.prefix(total - 4)
                let stored = EntryCodec.littleEndian(record, from: record.startIndex + total - 4, count: 4)
                guard UInt64(CRC32.checksum(body)) == stored else {
                    // Complete but wrong: damage, as for an entry (an interrupted append leaves a short record).
                    guard isLast, offset + total == count else { return damaged() }
                    result.damaged += 1
                    return result
                }
                let payload = String(decoding: body.dropFirst(markHeaderLength), as: UTF8.self)
                switch kind {
                case .removal: index.remove(id: payload)
                case .use: index.touch(id: payload)
                case .clear: index = CacheIndex()
                }
                offset += total
            } else {
                return damaged()
            }
            result.validLength = offset
        }
        return result
    }

    /// Appends the entries of the one-file-per-entry layout to the log, least recently used first, and deletes
    /// their files; files that do not verify are deleted and counted.
    private static func importLegacy(
        _ entriesPath: String,
        _ names: [String],
        into state: inout State,
        now: Double,
        segmentLimit: Int
    ) -> Int {
        guard !names.isEmpty, let segment = state.current else { return 0 }
        var found: [(lastUse: Double, name: String, entry: CachedEntry, bytes: Data)] = []
        var dropped = 0
        for name in names {
            let path = entriesPath + "/" + name
            var status = stat()
            guard stat(path, &status) == 0, status.st_mode & S_IFMT == S_IFREG,
                let data = try? FileIO.readFile(path),
                let entry = try? EntryCodec.decode(data), entry.key.identifier == name
            else {
                FileIO.removeFile(path)
                dropped += 1
                continue
            }
            #if canImport(Darwin)
            let lastUse = Double(status.st_mtimespec.tv_sec) + Double(status.st_mtimespec.tv_nsec) / 1e9
            #else
            let lastUse = Double(status.st_mtim.tv_sec) + Double(status.st_mtim.tv_nsec) / 1e9
            #endif
            found.append((lastUse, name, entry, data))
        }
        found.sort { ($0.lastUse, $0.name) < ($1.lastUse, $1.name) }
        for item in found {
            let offset = state.currentLength
            // Written before the file is deleted: a crash in between imports it again, which replaces it.
            guard FileIO.writeAll(segment.descriptor, item.bytes, at: offset) == nil else { break }
            state.currentLength += item.bytes.count
            state.logBytes += item.bytes.count
            state.index.insert(
                id: item.name,
                key: item.entry.key,
                value: Location(segment: segment, offset: offset, length: item.bytes.count, useRecorded: now),
                bytes: item.bytes.count
            )
            FileIO.removeFile(entriesPath + "/" + item.name)
        }
        return dropped
    }

    private static func emit(_ name: String, _ attributes: [String: String]) {
        NetworkAgentEvents.emit(
            NetworkAgentEvent(source: DiskCachePlugin.eventSource, name: name, attributes: attributes)
        )
    }
}
