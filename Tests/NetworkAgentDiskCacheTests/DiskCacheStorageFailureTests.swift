import Foundation
import NetworkAgent
import NetworkAgentDiskCache
import NetworkAgentTestServer
import NetworkAgentTestSupport
import NetworkAgentTesting
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Storage failures degrade to misses and `cache.error` events, never to failed requests.
@Suite struct DiskCacheStorageFailureTests {
    @Test func anUnusableDirectoryDegradesToMisses() async throws {
        // A directory below a regular file cannot exist, whoever runs the test (root ignores permissions).
        let parent = try TemporaryDirectory()
        defer { parent.remove() }
        let file = parent.url.appendingPathComponent("not-a-directory")
        try Data("x".utf8).write(to: file)
        let store = try DiskStore(directory: file.appendingPathComponent("cache"))
        #expect(store.unavailableReason != nil)
        let cache = try CacheHarness(store: store) { _, now in
            .cached("body", at: now, [("Cache-Control", "max-age=60")])
        }
        let first = try await cache.send()
        let second = try await cache.send()
        #expect(first.body == "body" && second.body == "body")
        #expect(second.status == .miss)
        #expect(cache.requestCount == 2)
        #expect(cache.plugin.stats.errors == 2)
        let error = try #require(cache.recorder.events.first { $0.name == "error" })
        #expect(error.attributes["reason"] == "unavailable")
    }

    @Test func aFailingWriteIsAnEventNotAFailure() async throws {
        let cache = try CacheHarness { _, now in .cached("body", at: now, [("Cache-Control", "max-age=60")]) }
        let directory = try #require(cache.directory).url
        // Replace the entries directory (where a write's temporary file goes) with a file: every write now fails
        // (ENOTDIR).
        let entries = directory.appendingPathComponent("entries")
        try FileManager.default.removeItem(at: entries)
        try Data().write(to: entries)
        let answer = try await cache.send()
        #expect(answer.body == "body")
        #expect(answer.status == .miss)
        #expect(cache.plugin.stats.errors == 1)
        #expect(cache.plugin.stats.stored == 0)
        let error = try #require(cache.recorder.events.first { $0.name == "error" })
        #expect(error.attributes["reason"] == "io")
        #expect(error.attributes["phase"] == "write")
    }

    @Test func aRemovedDirectoryIsCreatedAgain() async throws {
        let cache = try CacheHarness { _, now in .cached("body", at: now, [("Cache-Control", "max-age=60")]) }
        _ = try await cache.send("/one")
        let directory = try #require(cache.directory).url
        try FileManager.default.removeItem(at: directory.appendingPathComponent("entries"))
        // The lost entry is a miss; the new one is stored in the recreated directory.
        #expect(try await cache.send("/one").status == .miss)
        #expect(try await cache.send("/one").status == .hit)
        #expect(cache.requestCount == 2)
        #expect(cache.plugin.stats.errors == 0)
    }

    @Test func aCorruptEntryIsDroppedAndFetchedAgain() async throws {
        let cache = try CacheHarness { _, now in .cached("the body", at: now, [("Cache-Control", "max-age=60")]) }
        _ = try await cache.send()
        let entries = try #require(cache.directory).url.appendingPathComponent("entries")
        let name = try #require(try FileManager.default.contentsOfDirectory(atPath: entries.path).first)
        let file = entries.appendingPathComponent(name)
        var bytes = try Data(contentsOf: file)
        // Flip one bit of the body: the header still verifies, the entry checksum does not.
        let bodyIndex = try #require(bytes.range(of: Data("the body".utf8))).lowerBound
        bytes[bodyIndex] ^= 0x01
        try bytes.write(to: file)
        let answer = try await cache.send()
        #expect(answer.status == .miss)
        #expect(answer.body == "the body")
        #expect(cache.requestCount == 2)
        let error = try #require(cache.recorder.events.first { $0.name == "error" })
        #expect(error.attributes["reason"] == "corrupt_entry")
        #expect(try await cache.send().status == .hit)
    }

    @Test func aSecondStoreOnTheSameDirectoryIsRefusedClearly() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let first = try DiskStore(directory: directory.url)
        let error = #expect(throws: DiskCachePlugin.Error.self) { try DiskCachePlugin(directory: directory.url) }
        #expect(error?.code == .directoryLocked)
        #expect(error?.message.contains("in use by another DiskStore") == true)
        #expect(error?.message.contains("process \(ProcessInfo.processInfo.processIdentifier)") == true)
        withExtendedLifetime(first) {}
    }
}
