import Foundation
import NetworkAgent
import NetworkAgentDiskCache
import NetworkAgentTestServer
import NetworkAgentTestSupport
import NetworkAgentToolSupport
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A process killed with SIGKILL at random moments while writing entries leaves a cache that opens, serves only
/// whole entries, and keeps working.
///
/// The kill moments come from a seeded generator. Every failure message names the seed; to replay its kill
/// moments, run `NETWORKAGENT_CRASH_SEED=<seed> swift test --filter DiskCacheCrashTests`. (The writer's scheduling
/// still varies from run to run, so a replay repeats the moments, not necessarily the exact interleaving.)
@Suite struct DiskCacheCrashTests {
    /// The seed of the kill moments: `NETWORKAGENT_CRASH_SEED` when set (to replay a failure), random otherwise.
    static func seed() throws -> UInt64 {
        guard let text = ProcessInfo.processInfo.environment["NETWORKAGENT_CRASH_SEED"] else {
            return UInt64.random(in: .min ... .max)
        }
        return try #require(UInt64(text), "NETWORKAGENT_CRASH_SEED must be an unsigned integer, not \(text)")
    }

    static let rounds = 20
    static let slots = 64
    /// The writer's bound, which the test opens the store with too.
    static let maximumBytes = 256 << 10

    /// The `DiskCacheCrashWriter` executable, built next to the test bundle by `swift build` / `swift test`.
    static func writerExecutable() throws -> URL {
        try siblingExecutable("DiskCacheCrashWriter")
    }

    /// Checks an entry the writer wrote: its URL slot, length and fill byte must agree with its headers.
    static func isWhole(_ entry: CachedEntry, slot: Int) -> Bool {
        guard let seed = entry.headers["X-Seed"].flatMap(Int.init), seed % slots == slot,
            let length = entry.headers["X-Length"].flatMap(Int.init), length == (seed &* 7_919) % 16_384,
            let fill = entry.headers["X-Fill"].flatMap(UInt8.init), fill == UInt8(seed % 251)
        else { return false }
        return entry.body.count == length && entry.body.allSatisfy { $0 == fill }
            && entry.key.url == "http://crash.test/item/\(slot)"
    }

    static func key(slot: Int) -> CacheKey {
        CacheKey(method: "GET", url: "http://crash.test/item/\(slot)", credential: "", varyNames: [], variant: "")
    }

    /// Starts the writer and waits until it has opened the store (it prints `ready`).
    static func launchWriter(_ executable: URL, directory: URL, seed: Int, sync: Bool) throws -> Process {
        let process = Process()
        process.executableURL = executable
        process.arguments = [directory.path, "\(seed)", sync ? "sync" : "nosync"]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let ready = output.fileHandleForReading.readData(ofLength: 6)
        guard String(decoding: ready, as: UTF8.self) == "ready\n" else {
            process.terminate()
            process.waitUntilExit()
            throw CocoaError(.executableLoad, userInfo: [NSLocalizedDescriptionKey: "the writer did not start"])
        }
        return process
    }

    @Test func killedWritersLeaveACacheThatOpensAndServesOnlyWholeEntries() async throws {
        let executable = try Self.writerExecutable()
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let seed = try Self.seed()
        let replay = "replay with NETWORKAGENT_CRASH_SEED=\(seed)"
        var generator = SplitMix64(seed: seed)
        var servedEntries = 0

        for round in 0..<Self.rounds {
            let context: Comment = "round \(round); \(replay)"
            // Odd rounds sync every entry (DiskStore.Durability.powerLoss): writes then take long enough that kills
            // often land inside one.
            let writer = try Self.launchWriter(
                executable,
                directory: directory.url,
                seed: round * 1_000_000,
                sync: round % 2 == 1
            )
            // While the writer holds the directory, a second store is refused — across processes too.
            let refusal = #expect(throws: DiskCachePlugin.Error.self, context) {
                try DiskStore(directory: directory.url)
            }
            #expect(refusal?.code == .directoryLocked, context)
            #expect(refusal?.message.contains("process \(writer.processIdentifier)") == true, context)
            // Kill it at a random moment of its write loop (it writes some hundred entries per millisecond batch).
            try await Task.sleep(for: .microseconds(Int.random(in: 200...30_000, using: &generator)))
            kill(writer.processIdentifier, SIGKILL)
            writer.waitUntilExit()
            #expect(writer.terminationReason == .uncaughtSignal, context)
            #expect(writer.terminationStatus == SIGKILL, context)

            // A kill inside a write can leave the log's last record short, cut at any byte of it (at a page boundary
            // of the file); opening the store cuts it off.
            let entriesPath = directory.url.appendingPathComponent("entries").path

            // Every few rounds, damage the disk the way a power loss or a bad sector would, on top of the kill.
            var damaged = 0
            if round % 4 == 3 { damaged = try Self.damageARecord(in: directory.url) }

            let store = try DiskStore(directory: directory.url, maximumBytes: Self.maximumBytes)
            #expect(store.unavailableReason == nil, context)
            // A short last record is an interrupted append, not damage: only the damage done above is counted.
            #expect(store.corruptEntriesDroppedAtOpen == damaged, context)
            #expect(
                try FileManager.default.contentsOfDirectory(atPath: entriesPath).allSatisfy { $0.hasPrefix("log-") },
                context
            )
            var found = 0
            for slot in 0..<Self.slots {
                do {
                    guard let entry = try await store.entry(for: Self.key(slot: slot)) else { continue }
                    #expect(Self.isWhole(entry, slot: slot), "slot \(slot), \(context)")
                    found += 1
                } catch let error as DiskCachePlugin.Error {
                    Issue.record("slot \(slot), \(context): \(error)")
                }
            }
            #expect(found == store.usage.entryCount, context)
            #expect(store.usage.totalBytes <= Self.maximumBytes, context)
            servedEntries += found
            // And it keeps working: a new entry is stored and read back.
            let probe = EntryFactory.entry("/after-crash-\(round)")
            try await store.store(probe)
            #expect(try await store.entry(for: probe.key) == probe, context)
            store.remove(probe.key)
        }
        #expect(servedEntries > 0, "\(replay)")

        // Finally the directory serves a cache over the wire as usual.
        let server = try LoopbackServer { _ in .text("alive", headers: [("Cache-Control", "max-age=60")]) }
        defer { server.stop() }
        let plugin = try DiskCachePlugin(directory: directory.url)
        let provider = NetworkAgentProvider<CacheEndpoint>(plugins: [plugin], agent: TestTransport.agent())
        let endpoint = CacheEndpoint(baseURL: server.baseURL, path: "/alive")
        _ = try await provider.request(endpoint: endpoint)
        let (data, response) = try await provider.request(endpoint: endpoint)
        #expect(String(decoding: data, as: UTF8.self) == "alive")
        #expect(CacheStatus(response: response) == .hit)
        #expect(server.requestCount == 1)
    }

    /// Flips a byte of the first record's header in the oldest segment of the log; returns how many records were
    /// damaged (the rest of that segment cannot be framed any more and is cut off, uncounted: its records are lost,
    /// never served).
    static func damageARecord(in directory: URL) throws -> Int {
        let entries = directory.appendingPathComponent("entries")
        let segments = try FileManager.default.contentsOfDirectory(atPath: entries.path)
            .compactMap { name in name.hasPrefix("log-") ? Int(name.dropFirst(4)) : nil }.sorted()
        for number in segments {
            let file = entries.appendingPathComponent("log-\(number)")
            var bytes = try Data(contentsOf: file)
            guard bytes.count >= 8 else { continue }
            bytes[5] ^= 0x40  // a reserved byte, covered by the record's key or mark checksum
            try bytes.write(to: file)
            return 1
        }
        return 0
    }
}
