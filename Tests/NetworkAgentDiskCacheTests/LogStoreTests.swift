import Foundation
import NetworkAgentTestSupport
import NetworkAgentTesting
import Testing

@testable import NetworkAgentDiskCache

/// The log-structured store over the real file system: replay, torn tails, damage, compaction, the import of the
/// one-file-per-entry layout, eviction order, and a directory removed behind it.
@Suite struct LogStoreTests {
    static func entries(_ directory: TemporaryDirectory) -> URL {
        directory.url.appendingPathComponent("entries")
    }

    /// The segment files, lowest number first.
    static func segments(_ directory: TemporaryDirectory) throws -> [URL] {
        try FileManager.default.contentsOfDirectory(atPath: entries(directory).path)
            .filter { $0.hasPrefix(LogStore.segmentPrefix) }
            .sorted {
                Int($0.dropFirst(LogStore.segmentPrefix.count)) ?? 0 < Int($1.dropFirst(LogStore.segmentPrefix.count))
                    ?? 0
            }
            .map { entries(directory).appendingPathComponent($0) }
    }

    /// The last segment of a store in `directory` that stored an entry for each of `paths` and was then closed.
    static func segment(afterStoring paths: [String], in directory: TemporaryDirectory) async throws -> URL {
        do {
            let store = try LogStore(directory: directory.url)
            for path in paths { try await store.store(EntryFactory.entry(path)) }
        }
        return try #require(try segments(directory).last)
    }

    static func append(_ data: Data, to file: URL) throws {
        let handle = try FileHandle(forWritingTo: file)
        defer { try? handle.close() }
        try handle.seekToEnd()
        try handle.write(contentsOf: data)
    }

    @Test func entriesAndRemovalsSurviveReopening() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        var head = EntryFactory.entry("/x")
        head.key = EntryFactory.key("/x", method: "HEAD")
        do {
            let store = try LogStore(directory: directory.url)
            for path in ["/kept", "/removed", "/x"] { try await store.store(EntryFactory.entry(path)) }
            try await store.store(head)
            try await store.store(EntryFactory.entry("/kept", body: Data("newer".utf8)))
            store.remove(EntryFactory.key("/removed"))
            #expect(store.removeEntries(forURL: "http://store.test/x") == 2)
        }
        do {
            let reopened = try LogStore(directory: directory.url)
            #expect(reopened.corruptEntriesDroppedAtOpen == 0)
            #expect(reopened.usage.entryCount == 1)
            #expect(try await reopened.entry(for: EntryFactory.key("/kept"))?.body == Data("newer".utf8))
            #expect(try await reopened.entry(for: EntryFactory.key("/removed")) == nil)
            #expect(reopened.variantKeys(forPrimaryKey: EntryFactory.key("/x").primary).isEmpty)
            reopened.removeAll()
            #expect(reopened.usage == ResponseStoreUsage())
            try await reopened.store(EntryFactory.entry("/after-clear"))
        }
        let again = try LogStore(directory: directory.url)
        #expect(again.identifiersFromOldest == [EntryFactory.key("/after-clear").identifier])
    }

    @Test func aTornTailIsTruncatedAndNotCountedAsDamage() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let segment = try await Self.segment(afterStoring: ["/a", "/b"], in: directory)
        let whole = try Data(contentsOf: segment).count
        // An append a kill interrupted: the first half of an entry record.
        let record = EntryCodec.encode(EntryFactory.entry("/torn"))
        try Self.append(record.prefix(record.count / 2), to: segment)
        do {
            let reopened = try LogStore(directory: directory.url)
            #expect(reopened.corruptEntriesDroppedAtOpen == 0)
            #expect(try Data(contentsOf: segment).count == whole)
            #expect(reopened.usage.entryCount == 2)
            #expect(try await reopened.entry(for: EntryFactory.key("/torn")) == nil)
            // Appends go on after the cut, and replay cleanly.
            try await reopened.store(EntryFactory.entry("/c"))
            #expect(try await reopened.entry(for: EntryFactory.key("/c")) != nil)
        }
        let again = try LogStore(directory: directory.url)
        #expect(again.corruptEntriesDroppedAtOpen == 0 && again.usage.entryCount == 3)
    }

    /// A kill stops a write at a page boundary of the file, which can fall anywhere in a record: at every cut
    /// point, of an entry record and of a mark, the short tail is an interrupted append (cut off, not counted) and
    /// the records before it stay. Cuts inside an entry's 28-byte prefix once counted as damage.
    @Test func aTailCutAtAnyPointIsTornNotDamage() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let segment = try await Self.segment(afterStoring: ["/a", "/b"], in: directory)
        let whole = try Data(contentsOf: segment)
        let records = [
            EntryCodec.encode(EntryFactory.entry("/torn")),
            LogStore.mark(.removal, EntryFactory.key("/a").identifier),
        ]
        for record in records {
            for cut in 1..<record.count {
                try (whole + record.prefix(cut)).write(to: segment)
                let reopened = try LogStore(directory: directory.url)
                #expect(reopened.corruptEntriesDroppedAtOpen == 0, "cut after \(cut) of \(record.count) bytes")
                #expect(reopened.usage.entryCount == 2, "cut after \(cut) of \(record.count) bytes")
                #expect(try Data(contentsOf: segment) == whole, "cut after \(cut) of \(record.count) bytes")
            }
        }
    }

    @Test func aTornMarkAtTheTailIsDroppedQuietly() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let segment = try await Self.segment(afterStoring: ["/a"], in: directory)
        let mark = LogStore.mark(.removal, EntryFactory.key("/a").identifier)
        try Self.append(mark.prefix(mark.count - 2), to: segment)
        let reopened = try LogStore(directory: directory.url)
        #expect(reopened.corruptEntriesDroppedAtOpen == 0)
        #expect(try await reopened.entry(for: EntryFactory.key("/a")) != nil)
    }

    @Test func aWholeLengthTailThatFailsItsChecksumCountsAsDamage() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let segment = try await Self.segment(afterStoring: ["/a"], in: directory)
        // A power loss can leave the length written and the content not.
        var record = EntryCodec.encode(EntryFactory.entry("/lost", body: Data("payload".utf8)))
        record[record.count - 6] ^= 0x01
        try Self.append(record, to: segment)
        let reopened = try LogStore(directory: directory.url)
        #expect(reopened.corruptEntriesDroppedAtOpen == 1)
        #expect(reopened.usage.entryCount == 1)
        #expect(try await reopened.entry(for: EntryFactory.key("/lost")) == nil)
    }

    @Test func aDamagedRecordInTheMiddleIsCountedAndCutsTheSegmentThere() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let segment = try await Self.segment(afterStoring: ["/first", "/second", "/third"], in: directory)
        var bytes = try Data(contentsOf: segment)
        let second = EntryCodec.encode(EntryFactory.entry("/first")).count
        bytes[second + 30] ^= 0xff  // inside the second record's key: its key checksum fails
        try bytes.write(to: segment)
        let events = EventRecorder()
        let reopened = try await events.observing { try LogStore(directory: directory.url) }
        #expect(reopened.corruptEntriesDroppedAtOpen == 1)
        #expect(events.names(from: DiskCachePlugin.eventSource).filter { $0 == "error" }.count == 1)
        // The records after the damage cannot be framed: one of them could have been a removal, so the entries
        // replayed before it are forgotten as well (a damaged log loses entries, never brings a removed one back).
        #expect(reopened.usage.entryCount == 0)
        #expect(try Data(contentsOf: segment).count == second)
        // The log goes on from there.
        try await reopened.store(EntryFactory.entry("/fourth"))
        #expect(try await reopened.entry(for: EntryFactory.key("/fourth")) != nil)
    }

    @Test func aRemovalLostToDamageNeverBringsTheEntryBack() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let first = EntryCodec.encode(EntryFactory.entry("/removed")).count
        do {
            let store = try LogStore(directory: directory.url)
            try await store.store(EntryFactory.entry("/removed"))
            try await store.store(EntryFactory.entry("/other"))
            store.remove(EntryFactory.key("/removed"))
        }
        let segment = try #require(try Self.segments(directory).last)
        var bytes = try Data(contentsOf: segment)
        bytes[first + 5] ^= 0x40  // the second record's header: the removal after it is lost with it
        try bytes.write(to: segment)
        let reopened = try LogStore(directory: directory.url)
        #expect(reopened.corruptEntriesDroppedAtOpen == 1)
        #expect(try await reopened.entry(for: EntryFactory.key("/removed")) == nil)
    }

    @Test func aBodyDamagedAfterStartIsCaughtOnReadAndStaysForgotten() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let entry = EntryFactory.entry("/body", body: Data("payload".utf8))
        do {
            let store = try LogStore(directory: directory.url)
            try await store.store(entry)
            #expect(try await store.entry(for: entry.key) == entry)
            let segment = try #require(try Self.segments(directory).last)
            var bytes = try Data(contentsOf: segment)
            let body = try #require(bytes.range(of: Data("payload".utf8))).lowerBound
            bytes[body] ^= 0x01
            try bytes.write(to: segment)
            let error = await #expect(throws: DiskCachePlugin.Error.self) { try await store.entry(for: entry.key) }
            #expect(error?.code == .corruptEntry)
            #expect(try await store.entry(for: entry.key) == nil)
            #expect(store.usage.entryCount == 0)
        }
        // The removal mark keeps it forgotten; the damaged record is in the middle of the log, framed, and its key
        // still verifies, so the replay files it and the removal that follows forgets it.
        let reopened = try LogStore(directory: directory.url)
        #expect(reopened.usage.entryCount == 0)
    }

    @Test func leftoversAndStrayFilesAreRemovedAtStart() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        do {
            let store = try LogStore(directory: directory.url)
            try await store.store(EntryFactory.entry("/good"))
        }
        let entries = Self.entries(directory)
        try Data("half-written".utf8).write(to: entries.appendingPathComponent(DiskStore.partialPrefix + "7"))
        try Data("garbage".utf8).write(to: entries.appendingPathComponent("stray"))
        let reopened = try LogStore(directory: directory.url)
        #expect(reopened.corruptEntriesDroppedAtOpen == 1)
        #expect(reopened.usage.entryCount == 1)
        let names = try FileManager.default.contentsOfDirectory(atPath: entries.path)
        #expect(names.allSatisfy { $0.hasPrefix(LogStore.segmentPrefix) })
    }

    @Test func theOneFilePerEntryLayoutIsImportedOnceInItsOrderOfUse() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let paths = ["/first", "/second", "/third"]
        // The layout of earlier versions: one file per entry, named by its identifier.
        try FileManager.default.createDirectory(at: Self.entries(directory), withIntermediateDirectories: true)
        for path in paths {
            try EntryCodec.encode(EntryFactory.entry(path)).write(
                to: Self.entries(directory).appendingPathComponent(EntryFactory.key(path).identifier)
            )
        }
        for (offset, path) in ["/second", "/third", "/first"].enumerated() {
            let file = Self.entries(directory).appendingPathComponent(EntryFactory.key(path).identifier)
            try FileManager.default.setAttributes(
                [.modificationDate: Date(timeIntervalSinceNow: Double(offset - 10))],
                ofItemAtPath: file.path
            )
        }
        let order = ["/second", "/third", "/first"].map { EntryFactory.key($0).identifier }
        do {
            let store = try LogStore(directory: directory.url)
            #expect(store.corruptEntriesDroppedAtOpen == 0)
            #expect(store.identifiersFromOldest == order)
            for path in paths {
                #expect(try await store.entry(for: EntryFactory.key(path)) == EntryFactory.entry(path))
            }
            let names = try FileManager.default.contentsOfDirectory(atPath: Self.entries(directory).path)
            #expect(names.allSatisfy { $0.hasPrefix(LogStore.segmentPrefix) })
        }
        let reopened = try LogStore(directory: directory.url)
        #expect(reopened.usage.entryCount == 3)
    }

    @Test func evictionTakesTheLeastRecentlyUsedAndTheOrderSurvivesReopening() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let body = Data(repeating: 1, count: 1_000)
        let size = EntryCodec.encode(EntryFactory.entry("/a", body: body)).count
        do {
            // Every read records its use (interval 0), so the order is in the log.
            let store = try LogStore(directory: directory.url, maximumBytes: size * 3, useRecordingInterval: 0)
            for path in ["/a", "/b", "/c"] { try await store.store(EntryFactory.entry(path, body: body)) }
            _ = try await store.entry(for: EntryFactory.key("/a"))  // /b is now the least recently used
            let evicted = try await store.store(EntryFactory.entry("/d", body: body))
            #expect(evicted == ResponseStoreUsage(entryCount: 1, totalBytes: size))
            #expect(try await store.entry(for: EntryFactory.key("/b")) == nil)
            _ = try await store.entry(for: EntryFactory.key("/c"))
            #expect(store.usage == ResponseStoreUsage(entryCount: 3, totalBytes: size * 3))
        }
        let reopened = try LogStore(directory: directory.url, maximumBytes: size * 3)
        #expect(reopened.identifiersFromOldest == ["/a", "/d", "/c"].map { EntryFactory.key($0).identifier })
    }

    @Test func readsWithinTheIntervalRecordNoUse() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try LogStore(directory: directory.url)
        try await store.store(EntryFactory.entry("/hot"))
        let before = store.logBytes
        for _ in 0..<3 { #expect(try await store.entry(for: EntryFactory.key("/hot")) != nil) }
        #expect(store.logBytes == before)
    }

    @Test func compactionKeepsTheNewestOfEachKeyAndBoundsTheLog() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let body = { (round: Int) in Data(repeating: UInt8(round), count: 2_000) }
        let size = EntryCodec.encode(EntryFactory.entry("/k/0", body: body(0))).count
        let maximum = size * 10
        do {
            let store = try LogStore(directory: directory.url, maximumBytes: maximum)
            for round in 0..<40 {
                for key in 0..<8 { try await store.store(EntryFactory.entry("/k/\(key)", body: body(round))) }
                #expect(store.logBytes <= 2 * maximum + store.segmentLimit + size)
            }
            #expect(store.segmentNumbers.count <= 3)
            for key in 0..<8 { #expect(try await store.entry(for: EntryFactory.key("/k/\(key)"))?.body == body(39)) }
        }
        let reopened = try LogStore(directory: directory.url, maximumBytes: maximum)
        #expect(reopened.corruptEntriesDroppedAtOpen == 0)
        #expect(reopened.usage.entryCount == 8)
        for key in 0..<8 { #expect(try await reopened.entry(for: EntryFactory.key("/k/\(key)"))?.body == body(39)) }
    }

    @Test func aCompactionInterruptedBeforeTheOldSegmentsWentReplaysOnce() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        do {
            let store = try LogStore(directory: directory.url)
            for path in ["/a", "/b"] { try await store.store(EntryFactory.entry(path)) }
            store.remove(EntryFactory.key("/b"))
        }
        // The copy of the live entries was written as the next segment; the old one was not deleted yet.
        let old = try #require(try Self.segments(directory).last)
        let copy = try Data(contentsOf: old).prefix(EntryCodec.encode(EntryFactory.entry("/a")).count)
        let number = try #require(Int(old.lastPathComponent.dropFirst(LogStore.segmentPrefix.count)))
        try copy.write(to: Self.entries(directory).appendingPathComponent(LogStore.segmentName(number + 1)))
        let reopened = try LogStore(directory: directory.url)
        #expect(reopened.corruptEntriesDroppedAtOpen == 0)
        #expect(reopened.usage.entryCount == 1)
        #expect(try await reopened.entry(for: EntryFactory.key("/a")) == EntryFactory.entry("/a"))
        #expect(try await reopened.entry(for: EntryFactory.key("/b")) == nil)
    }

    @Test func aRemovedDirectoryForgetsTheEntriesAndIsCreatedAgain() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try LogStore(directory: directory.url)
        try await store.store(EntryFactory.entry("/one"))
        try FileManager.default.removeItem(at: Self.entries(directory))
        #expect(try await store.entry(for: EntryFactory.key("/one")) == nil)
        try await store.store(EntryFactory.entry("/one"))
        #expect(try await store.entry(for: EntryFactory.key("/one")) != nil)
        #expect(try Self.segments(directory).count == 1)
    }

    /// The check before each append: an open file is deleted once no name links to it; on Linux the link count
    /// comes from `statx` and equals `fstat`'s.
    @Test func anOpenFileIsUnlinkedOnceNoNameLinksToIt() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let first = directory.url.appendingPathComponent("first").path
        let second = directory.url.appendingPathComponent("second").path
        let descriptor = open(first, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        try #require(descriptor >= 0)
        func links() -> Int {
            var status = stat()
            return fstat(descriptor, &status) == 0 ? Int(status.st_nlink) : -1
        }
        func check(_ expected: Int) {
            #expect(links() == expected)
            #expect(FileIO.isUnlinked(descriptor) == (expected == 0))
            #if canImport(Glibc)
            #expect(LinkCount.of(descriptor).map(Int.init) == expected)
            #endif
        }
        check(1)
        #expect(link(first, second) == 0)
        check(2)
        #expect(unlink(first) == 0)
        check(1)
        #expect(unlink(second) == 0)
        check(0)
        close(descriptor)
    }

    @Test func aWriteIntoAFileWhereTheDirectoryWasFailsWithIO() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try LogStore(directory: directory.url)
        try await store.store(EntryFactory.entry("/one"))
        try FileManager.default.removeItem(at: Self.entries(directory))
        try Data().write(to: Self.entries(directory))
        let error = await #expect(throws: DiskCachePlugin.Error.self) {
            try await store.store(EntryFactory.entry("/two"))
        }
        #expect(error?.code == .io)
    }

    @Test func concurrentWritersAndReadersKeepTheIndexAndLogInStep() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (usage, order) = try await {
            let store = try LogStore(directory: directory.url, maximumBytes: 40_000)
            try await Self.writeConcurrently(into: store)
            return (store.usage, store.identifiersFromOldest)
        }()
        let reopened = try LogStore(directory: directory.url, maximumBytes: 40_000)
        #expect(reopened.corruptEntriesDroppedAtOpen == 0)
        #expect(reopened.usage == usage)
        #expect(Set(reopened.identifiersFromOldest) == Set(order))
    }

    /// Eight tasks storing and reading 20 keys into `store`, which is bounded to 40,000 bytes.
    static func writeConcurrently(into store: some ResponseStore) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            for worker in 0..<8 {
                group.addTask {
                    for round in 0..<50 {
                        let path = "/item/\((worker * 7 + round) % 20)"
                        try await store.store(
                            EntryFactory.entry(path, body: Data(repeating: UInt8(round), count: 500 + round * 10))
                        )
                        if let entry = try await store.entry(for: EntryFactory.key(path)) {
                            #expect(entry.body.allSatisfy { $0 == entry.body.first })
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(store.usage.totalBytes <= 40_000)
    }
}
