import Foundation
import NetworkAgent
import NetworkAgentDiskCache
import NetworkAgentTestServer
import NetworkAgentTestSupport
import NetworkAgentTesting
import Testing

@testable import NetworkAgentRedisCache

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A key of the wrong type where the store expects a set or an entry (another program, a bad migration): the store
/// removes or overwrites it, so the URL is cacheable again on the next response instead of for the key's TTL.
@Suite(.enabled(if: RedisTestServer.isAvailable, RedisTestServer.skipReason))
struct RedisWrongTypeTests {
    enum Spoiled: String, CaseIterable, CustomTestStringConvertible, Sendable {
        case variantSet, urlSet, entry
        var testDescription: String { rawValue }
    }

    @Test(arguments: Spoiled.allCases)
    func aKeyOfTheWrongTypeIsRepaired(_ spoiled: Spoiled) async throws {
        let store = try RedisTestServer.makeStore()
        let cache = try CacheHarness(store: store, cleanUp: store.cleanUp) { _, now in
            .cached("good", at: now, [("Cache-Control", "max-age=60")])
        }
        let key = try #require(
            CacheKey(request: URLRequest(url: cache.server.baseURL.appendingPathComponent("resource")))
        )
        let prefix = store.configuration.keyPrefix
        let name =
            switch spoiled {
            case .variantSet: prefix + ":v:" + key.primary
            case .urlSet: prefix + ":u:" + key.url
            case .entry: store.redisKey(for: key)
            }
        // A day-long key of another type, as another program would leave it.
        let command =
            spoiled == .entry
            ? ["HSET", name, "field", "value"] : ["RPUSH", name, "not", "a", "set"]
        #expect(await store.rawCommand(command.map { Data($0.utf8) }) == .integer(spoiled == .entry ? 1 : 3))
        #expect(await store.rawCommand(["PEXPIRE", name, "86400000"].map { Data($0.utf8) }) == .integer(1))
        if spoiled == .entry {
            // The variant set names the entry, so that the read reaches it.
            let set = prefix + ":v:" + key.primary
            _ = await store.rawCommand(["SADD", set, key.identifier].map { Data($0.utf8) })
        }

        let first = try await cache.send()
        #expect(first.status == .miss && first.body == "good")
        let second = try await cache.send()
        #expect(second.status == .hit, "the URL stayed uncacheable with a wrong-typed \(spoiled) key")
        #expect(second.body == "good")
        #expect(cache.requestCount == 1)
        let expected = spoiled == .entry ? "string" : "set"
        #expect(await store.rawCommand([Data("TYPE".utf8), Data(name.utf8)]) == .status(expected))
    }

    /// The read script itself (not the write after it) answers nothing for wrong-typed keys, without an error, and
    /// removes them: a variant set that is not a set, and an entry that is not a string (taken out of its set too).
    @Test func theReadRepairsWrongTypedKeysByItself() async throws {
        let store = try RedisTestServer.makeStore()
        let prefix = store.configuration.keyPrefix
        let setPrimary = "GET http://wrongtype.test/set"
        let setName = prefix + ":v:" + setPrimary
        _ = await store.rawCommand(["RPUSH", setName, "x"].map { Data($0.utf8) })
        #expect(try await store.variants(forPrimaryKey: setPrimary).isEmpty)
        #expect(await store.rawCommand([Data("EXISTS".utf8), Data(setName.utf8)]) == .integer(0))

        let key = CacheKey(
            method: "GET",
            url: "http://wrongtype.test/entry",
            credential: "",
            varyNames: [],
            variant: ""
        )
        let entryName = store.redisKey(for: key)
        let entrySet = prefix + ":v:" + key.primary
        _ = await store.rawCommand(["HSET", entryName, "field", "value"].map { Data($0.utf8) })
        _ = await store.rawCommand(["SADD", entrySet, key.identifier, "gone"].map { Data($0.utf8) })
        #expect(try await store.variants(forPrimaryKey: key.primary).isEmpty)
        #expect(await store.rawCommand([Data("EXISTS".utf8), Data(entryName.utf8)]) == .integer(0))
        #expect(await store.rawCommand([Data("EXISTS".utf8), Data(entrySet.utf8)]) == .integer(0))
        await store.cleanUp()
    }

    @Test func anUnsafeRequestInvalidatesThroughAWrongTypedURLSet() async throws {
        let store = try RedisTestServer.makeStore()
        let url = "http://wrongtype.test/a"
        let name = store.configuration.keyPrefix + ":u:" + url
        _ = await store.rawCommand(["RPUSH", name, "x"].map { Data($0.utf8) })
        #expect(await store.removeEntries(forURL: url) == 0)
        #expect(await store.rawCommand([Data("EXISTS".utf8), Data(name.utf8)]) == .integer(0))
        await store.cleanUp()
    }
}
