import Dispatch
import Foundation
import NetworkAgent
import NetworkAgentTestServer
import NetworkAgentTestSupport
import Testing

@testable import NetworkAgentDiskCache

/// Plugins opening stores by directory: a slow open holds up only the plugins on its own directory, and a directory
/// is never opened twice at once.
@Suite struct DiskStoreRegistryTests {
    @Test func aSlowOpenHoldsUpOnlyPluginsOnItsOwnDirectory() async throws {
        let slow = try TemporaryDirectory()
        defer { slow.remove() }
        let other = try TemporaryDirectory()
        defer { other.remove() }
        let slowKey = slow.url.standardizedFileURL.resolvingSymlinksInPath().path
        // The slow directory's open stands still until the gate opens: an index rebuild of a large store.
        let gate = DispatchSemaphore(value: 0)
        let opens = Locked(0)
        DiskStoreRegistry.willOpen.withLock {
            $0 = { key in
                guard key == slowKey else { return }
                opens.withLock { $0 += 1 }
                gate.wait()
            }
        }
        defer { DiskStoreRegistry.willOpen.withLock { $0 = nil } }
        var gateOpen = false
        defer { if !gateOpen { gate.signal() } }

        // Plugins are created synchronously: each opener runs on a thread of its own, off the cooperative pool.
        let first = Locked<DiskStore?>(nil)
        let second = Locked<DiskStore?>(nil)
        let elsewhere = Locked<DiskStore?>(nil)
        func open(_ directory: URL, into result: Locked<DiskStore?>) {
            Thread {
                let store = try? DiskStoreRegistry.store(
                    directory: directory,
                    maximumBytes: 1 << 20,
                    durability: .processCrash
                )
                result.withLock { $0 = store }
            }
            .start()
        }
        open(slow.url, into: first)
        try #require(await eventually(within: .seconds(5)) { opens.withLock { $0 } == 1 }, "the slow open never began")
        open(slow.url, into: second)
        open(other.url, into: elsewhere)
        // Before: the first open held the registry's process-wide lock, so this one waited for the gate.
        let otherOpened = await eventually(within: .seconds(2)) { elsewhere.withLock { $0 } != nil }
        #expect(otherOpened, "a plugin on another directory waited for a slow open")
        #expect(second.withLock { $0 } == nil, "the second plugin on the slow directory did not wait for its store")

        gate.signal()
        gateOpen = true
        #expect(await eventually(within: .seconds(5)) { first.withLock { $0 } != nil && second.withLock { $0 } != nil })
        let firstStore = try #require(first.withLock { $0 })
        let secondStore = try #require(second.withLock { $0 })
        #expect(firstStore === secondStore, "two plugins on one directory got two stores")
        #expect(opens.withLock { $0 } == 1, "the directory was opened twice")
    }
}
