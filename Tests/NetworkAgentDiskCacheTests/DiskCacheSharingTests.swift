import Foundation
import NetworkAgent
import NetworkAgentDiskCache
import NetworkAgentTestServer
import NetworkAgentTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Several caches on one directory: plugins in one process share the directory's store; another process is kept
/// out by the directory's lock.
@Suite struct DiskCacheSharingTests {
    @Test("17.14 two plugins on one directory in one process share the store: one's entry is the other's hit")
    func twoPluginsInOneProcessShareTheStore() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let server = try LoopbackServer { _ in .text("shared", headers: [("Cache-Control", "max-age=60")]) }
        defer { server.stop() }
        let first = try DiskCachePlugin(directory: directory.url)
        let second = try DiskCachePlugin(directory: directory.url.appendingPathComponent("."))
        let endpoint = CacheEndpoint(baseURL: server.baseURL, path: "/shared")

        _ = try await NetworkAgentProvider<CacheEndpoint>(plugins: [first], agent: TestTransport.agent()).request(
            endpoint: endpoint
        )
        let (data, response) = try await NetworkAgentProvider<CacheEndpoint>(
            plugins: [second],
            agent: TestTransport.agent()
        )
        .request(endpoint: endpoint)
        #expect(String(decoding: data, as: UTF8.self) == "shared")
        #expect(CacheStatus(response: response) == .hit)
        #expect(server.requestCount == 1)
        #expect(first.stats.entryCount == 1)
        #expect(second.stats.entryCount == 1)
        let sameStore = (first.store as AnyObject) === (second.store as AnyObject)
        #expect(sameStore)
    }

    @Test("17.14 the directory's lock is released when the last plugin sharing it goes")
    func theLockIsReleasedWithTheLastPlugin() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        var first: DiskCachePlugin? = try DiskCachePlugin(directory: directory.url)
        var second: DiskCachePlugin? = try DiskCachePlugin(directory: directory.url)
        // A store opened on its own is not shared: it still finds the directory locked.
        #expect(throws: DiskCachePlugin.Error.self) { try DiskStore(directory: directory.url) }
        first = nil
        #expect(throws: DiskCachePlugin.Error.self) { try DiskStore(directory: directory.url) }
        #expect(second != nil)
        second = nil
        #expect(try DiskStore(directory: directory.url).unavailableReason == nil)
        #expect(first == nil)
    }

    @Test("17.14 a plugin in another process still finds the directory locked")
    func anotherProcessIsRefused() throws {
        let executable = try DiskCacheCrashTests.writerExecutable()
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let writer = try DiskCacheCrashTests.launchWriter(executable, directory: directory.url, seed: 0, sync: false)
        defer {
            kill(writer.processIdentifier, SIGKILL)
            writer.waitUntilExit()
        }
        let refusal = #expect(throws: DiskCachePlugin.Error.self) { try DiskCachePlugin(directory: directory.url) }
        #expect(refusal?.code == .directoryLocked)
        #expect(refusal?.message.contains("process \(writer.processIdentifier)") == true)
    }
}
