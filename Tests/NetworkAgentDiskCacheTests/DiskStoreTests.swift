import Foundation
import NetworkAgentTestSupport
import NetworkAgentTesting
import Testing

@testable import NetworkAgentDiskCache

/// The disk store: persistence, the rebuilt index, LRU by bytes, the lock, and damage found at start.
@Suite struct DiskStoreTests {
    @Test func entriesSurviveReopening() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let entry = EntryFactory.entry("/persist", headers: ["ETag": "\"p\""])
        do {
            let store = try DiskStore(directory: directory.url)
            try await store.store(entry)
        }
        let reopened = try DiskStore(directory: directory.url)
        #expect(reopened.usage.entryCount == 1)
        #expect(try await reopened.entry(for: entry.key) == entry)
        #expect(reopened.variantKeys(forPrimaryKey: entry.key.primary) == [entry.key])
        #expect(reopened.corruptEntriesDroppedAtOpen == 0)
    }

    @Test func theLeastRecentlyUsedEntriesAreEvictedByBytes() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let body = Data(repeating: 1, count: 1_000)
        let size = EntryCodec.encode(EntryFactory.entry("/a", body: body)).count
        let store = try DiskStore(directory: directory.url, maximumBytes: size * 3)
        for path in ["/a", "/b", "/c"] { try await store.store(EntryFactory.entry(path, body: body)) }
        _ = try await store.entry(for: EntryFactory.key("/a"))  // /b is now the least recently used
        let evicted = try await store.store(EntryFactory.entry("/d", body: body))
        #expect(evicted == ResponseStoreUsage(entryCount: 1, totalBytes: size))
        #expect(try await store.entry(for: EntryFactory.key("/b")) == nil)
        for path in ["/a", "/c", "/d"] { #expect(try await store.entry(for: EntryFactory.key(path)) != nil) }
        #expect(store.usage == ResponseStoreUsage(entryCount: 3, totalBytes: size * 3))
        // The eviction is in the log: a reopened store does not bring /b back.
        let reopened = DiskStore(log: LogStore.reopening(store))
        #expect(reopened.usage == ResponseStoreUsage(entryCount: 3, totalBytes: size * 3))
        #expect(try await reopened.entry(for: EntryFactory.key("/b")) == nil)
    }

    @Test func anEntryLargerThanTheBoundIsNotStoredAndRemovesTheOlderOne() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try DiskStore(directory: directory.url, maximumBytes: 1_000)
        try await store.store(EntryFactory.entry("/small"))
        try await store.store(EntryFactory.entry("/big"))
        #expect(store.usage.entryCount == 2)
        #expect(try await store.store(EntryFactory.entry("/big", body: Data(count: 2_000))) == ResponseStoreUsage())
        #expect(try await store.entry(for: EntryFactory.key("/big")) == nil)
        #expect(store.usage.entryCount == 1)
    }

    @Test func theRebuiltIndexKeepsTheOrderOfUse() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        do {
            // Every read records its use (interval 0; a minute by default).
            let store = DiskStore(log: try LogStore(directory: directory.url, useRecordingInterval: 0))
            for path in ["/first", "/second", "/third"] { try await store.store(EntryFactory.entry(path)) }
            _ = try await store.entry(for: EntryFactory.key("/first"))
        }
        let reopened = try DiskStore(directory: directory.url)
        #expect(
            reopened.identifiersFromOldest == ["/second", "/third", "/first"].map { EntryFactory.key($0).identifier }
        )
    }

    @Test func readsRecordTheirUseOnceAMinute() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        do {
            let store = try DiskStore(directory: directory.url)
            try await store.store(EntryFactory.entry("/hot"))
            let before = store.log.logBytes
            // Stored just now, which counts as a use: reads within the minute append nothing.
            for _ in 0..<3 { #expect(try await store.entry(for: EntryFactory.key("/hot")) != nil) }
            #expect(store.log.logBytes == before)
        }
        let store = try LogStore(directory: directory.url, useRecordingInterval: 0)
        let before = store.logBytes
        _ = try await store.entry(for: EntryFactory.key("/hot"))
        #expect(store.logBytes == before + LogStore.mark(.use, EntryFactory.key("/hot").identifier).count)
    }

    @Test func damagedEntriesAndLeftoversOfTheFilePerEntryLayoutAreRemovedAtStart() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        // The layout of earlier versions: one file per entry, named by its identifier.
        let entries = directory.url.appendingPathComponent("entries")
        try FileManager.default.createDirectory(at: entries, withIntermediateDirectories: true)
        func file(_ path: String) -> URL { entries.appendingPathComponent(EntryFactory.key(path).identifier) }
        for path in ["/good", "/truncated", "/flipped", "/moved"] {
            try EntryCodec.encode(EntryFactory.entry(path)).write(to: file(path))
        }
        let truncated = try Data(contentsOf: file("/truncated"))
        try truncated.prefix(truncated.count - 3).write(to: file("/truncated"))
        var flipped = try Data(contentsOf: file("/flipped"))
        flipped[30] ^= 0xff
        try flipped.write(to: file("/flipped"))
        try FileManager.default.moveItem(
            at: file("/moved"),
            to: entries.appendingPathComponent(String(repeating: "0", count: 64))
        )
        try Data("garbage".utf8).write(to: entries.appendingPathComponent("stray"))
        // Leftovers of interrupted writes: that layout's, and an earlier version's in its `tmp/` directory. They
        // are removed without counting as damage.
        try Data("half-written".utf8).write(to: entries.appendingPathComponent(DiskStore.partialPrefix + "7"))
        let legacyTemporary = directory.url.appendingPathComponent("tmp")
        try FileManager.default.createDirectory(at: legacyTemporary, withIntermediateDirectories: true)
        try Data("half-written".utf8).write(to: legacyTemporary.appendingPathComponent("leftover"))

        let events = EventRecorder()
        let reopened = try await events.observing { try DiskStore(directory: directory.url) }
        #expect(reopened.corruptEntriesDroppedAtOpen == 4)
        #expect(events.names(from: DiskCachePlugin.eventSource).filter { $0 == "error" }.count == 4)
        #expect(reopened.usage.entryCount == 1)
        #expect(try await reopened.entry(for: EntryFactory.key("/good")) == EntryFactory.entry("/good"))
        // The good entry was imported into the log.
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: entries.path).allSatisfy {
                $0.hasPrefix(LogStore.segmentPrefix)
            }
        )
        #expect(!FileManager.default.fileExists(atPath: legacyTemporary.path))
    }

    /// The one segment file of a store that wrote little.
    static func segment(_ directory: TemporaryDirectory) throws -> URL {
        let entries = directory.url.appendingPathComponent("entries")
        let name = try #require(
            try FileManager.default.contentsOfDirectory(atPath: entries.path).first {
                $0.hasPrefix(LogStore.segmentPrefix)
            }
        )
        return entries.appendingPathComponent(name)
    }

    @Test func aBodyDamagedAfterStartIsCaughtOnReadAndDeleted() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try DiskStore(directory: directory.url)
        let entry = EntryFactory.entry("/body", body: Data("payload".utf8))
        try await store.store(entry)
        let file = try Self.segment(directory)
        var bytes = try Data(contentsOf: file)
        bytes[bytes.count - 6] ^= 0x01
        try bytes.write(to: file)
        let error = await #expect(throws: DiskCachePlugin.Error.self) { try await store.entry(for: entry.key) }
        #expect(error?.code == .corruptEntry)
        #expect(try await store.entry(for: entry.key) == nil)
        #expect(store.usage.entryCount == 0)
    }

    @Test func aBodyDamagedAfterItWasReadAndKeptDecodedIsStillCaught() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try DiskStore(directory: directory.url)
        let entry = EntryFactory.entry("/read-then-damaged", body: Data("payload".utf8))
        try await store.store(entry)
        #expect(try await store.entry(for: entry.key) == entry)
        #expect(store.decodedEntryCount == 1)
        let file = try Self.segment(directory)
        var bytes = try Data(contentsOf: file)
        bytes[bytes.count - 6] ^= 0x01
        try bytes.write(to: file)
        let error = await #expect(throws: DiskCachePlugin.Error.self) { try await store.entry(for: entry.key) }
        #expect(error?.code == .corruptEntry)
        #expect(store.decodedEntryCount == 0)
    }

    @Test func aFileReplacedBehindTheStoreIsDecodedAgain() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try DiskStore(directory: directory.url)
        let first = EntryFactory.entry("/replaced", body: Data("first".utf8))
        try await store.store(first)
        #expect(try await store.entry(for: first.key) == first)
        // Another valid entry of the same key and length, written over the file as something else would.
        let second = EntryFactory.entry("/replaced", body: Data("other".utf8))
        let file = try Self.segment(directory)
        try EntryCodec.encode(second).write(to: file)
        #expect(try await store.entry(for: first.key) == second)
        try FileManager.default.removeItem(at: file)
        #expect(try await store.entry(for: first.key) == nil)
        #expect(store.usage.entryCount == 0)
    }

    @Test func theKeptDecodedEntriesStayWithinTheirBudget() {
        let entry = EntryFactory.entry("/kept", body: Data(count: 100))
        let bytes = EntryCodec.encode(entry)
        var kept = DecodedEntries(budget: (2 * bytes.count + 256) * 8)
        for number in 0..<20 {
            kept.insert(Decoded(bytes: bytes, entry: entry), for: "\(number)")
            #expect(kept.count <= 8 && kept["\(number)"] != nil)
        }
        #expect(kept.count == 4)
        kept.insert(Decoded(bytes: bytes + Data(count: 2 * bytes.count), entry: entry), for: "large")
        #expect(kept["large"] == nil)
        kept.remove("19")
        #expect(kept["19"] == nil && kept.count == 3)
    }

    @Test func theLockIsReleasedWithTheStore() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        var first: DiskStore? = try DiskStore(directory: directory.url)
        #expect(throws: DiskCachePlugin.Error.self) { try DiskStore(directory: directory.url) }
        #expect(first != nil)
        first = nil
        let second = try DiskStore(directory: directory.url)
        #expect(second.unavailableReason == nil)
    }

    @Test func removalsByKeyURLAndAll() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try DiskStore(directory: directory.url)
        let get = EntryFactory.entry("/x")
        var head = EntryFactory.entry("/x")
        head.key = EntryFactory.key("/x", method: "HEAD")
        try await store.store(get)
        try await store.store(head)
        try await store.store(EntryFactory.entry("/y"))
        #expect(store.removeEntries(forURL: "http://store.test/x") == 2)
        #expect(store.usage.entryCount == 1)
        store.remove(EntryFactory.key("/y"))
        #expect(store.usage.entryCount == 0)
        try await store.store(EntryFactory.entry("/z"))
        store.removeAll()
        #expect(store.usage == ResponseStoreUsage())
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: directory.url.appendingPathComponent("entries").path)
                .isEmpty
        )
    }

    @Test func concurrentWritersAndReadersKeepTheIndexAndFilesInStep() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try DiskStore(directory: directory.url, maximumBytes: 40_000)
        try await LogStoreTests.writeConcurrently(into: store)
        let reopened = DiskStore(log: LogStore.reopening(store))
        #expect(reopened.corruptEntriesDroppedAtOpen == 0)
        #expect(reopened.usage == store.usage)
    }
}

@Suite struct MemoryStoreTests {
    @Test func itIsBoundedAndLeastRecentlyUsedFirst() {
        let store = MemoryStore(maximumBytes: 1_000)
        let body = Data(repeating: 0, count: 200)
        for path in ["/a", "/b"] { store.store(EntryFactory.entry(path, body: body), retention: .anHour) }
        _ = store.variants(forPrimaryKey: EntryFactory.key("/a").primary)
        let evicted = store.store(EntryFactory.entry("/c", body: body), retention: .anHour)
        #expect(evicted.entryCount == 1)
        #expect(store.variants(forPrimaryKey: EntryFactory.key("/b").primary).isEmpty)
        #expect(store.variantKeys(forPrimaryKey: EntryFactory.key("/a").primary) == [EntryFactory.key("/a")])
        #expect(store.removeEntries(forURL: "http://store.test/a") == 1)
        store.removeAll()
        #expect(store.usage == ResponseStoreUsage())
    }
}

extension LogStore {
    /// Replays the log of a store that is still open (its lock is not taken: the store must not be written to any
    /// more), as the next start would.
    static func reopening(_ store: DiskStore) -> LogStore {
        LogStore(
            directory: store.directory,
            maximumBytes: store.maximumBytes,
            durability: store.durability,
            useRecordingInterval: DiskStore.useRecordingInterval,
            lock: .held(descriptor: open("/dev/null", O_RDONLY | O_CLOEXEC), sharedAs: nil)
        )
    }
}
