import Foundation
import Testing

@testable import NetworkAgentDiskCache

/// The index's secondary lookups, which keep a single identifier without a set of its own.
@Suite struct CacheIndexTests {
    static func key(_ path: String, variant: String = "", credential: String = "") -> CacheKey {
        CacheKey(
            method: "GET",
            url: "http://index.test\(path)",
            credential: credential,
            varyNames: variant.isEmpty ? [] : ["accept-language"],
            variant: variant
        )
    }

    @Test func lookupsFollowInsertsReplacementsAndRemovals() {
        var index = CacheIndex<Void>()
        let english = Self.key("/a", variant: "en")
        let german = Self.key("/a", variant: "de")
        let alice = Self.key("/a", credential: "alice")
        index.insert(id: "en", key: english, value: (), bytes: 1)
        #expect(Set(index.ids(primary: english.primary)) == ["en"])
        index.insert(id: "de", key: german, value: (), bytes: 1)
        index.insert(id: "en", key: english, value: (), bytes: 2)  // a new write of the same entry
        index.insert(id: "alice", key: alice, value: (), bytes: 1)
        #expect(Set(index.ids(primary: english.primary)) == ["en", "de"])
        #expect(index.ids(primary: english.primary).count == 2)
        #expect(Set(index.ids(primary: alice.primary)) == ["alice"])
        #expect(Set(index.ids(url: english.url)) == ["en", "de", "alice"])
        #expect(index.ids(url: english.url).count == 3)

        index.remove(id: "de")
        #expect(Array(index.ids(primary: english.primary)) == ["en"])
        #expect(Set(index.ids(url: english.url)) == ["en", "alice"])
        index.remove(id: "en")
        #expect(index.ids(primary: english.primary).isEmpty)
        #expect(Array(index.ids(primary: english.primary)).isEmpty)
        #expect(Array(index.ids(url: english.url)) == ["alice"])
        index.remove(id: "alice")
        #expect(index.ids(url: english.url).isEmpty)
        #expect(index.count == 0 && index.totalBytes == 0)
    }

    /// A fixed pseudo-random run of inserts, replacements, uses and removals over a few resources with several
    /// variants each keeps the order of use, the sizes and both secondary lookups equal to a plain model's.
    @Test func orderOfUseAndLookupsMatchAModelThroughMixedOperations() {
        var index = CacheIndex<Int>()
        var order: [String] = []  // least recently used first
        var keys: [String: CacheKey] = [:]
        var sizes: [String: Int] = [:]
        var generator = SplitMix(seed: 29)
        for step in 0..<2_000 {
            let path = "/r\(generator.next() % 4)"
            let variant = ["", "en", "de"][Int(generator.next() % 3)]
            let credential = generator.next() % 5 == 0 ? "bob" : ""
            let key = Self.key(path, variant: variant, credential: credential)
            let id = "\(path)|\(variant)|\(credential)"
            switch generator.next() % 4 {
            case 0, 1:
                index.insert(id: id, key: key, value: step, bytes: step % 7 + 1)
                order.removeAll { $0 == id }
                order.append(id)
                keys[id] = key
                sizes[id] = step % 7 + 1
            case 2:
                index.touch(id: id)
                if order.contains(id) {
                    order.removeAll { $0 == id }
                    order.append(id)
                }
            default:
                index.remove(id: id)
                order.removeAll { $0 == id }
                keys[id] = nil
                sizes[id] = nil
            }
            #expect(index.idsFromOldest == order, "step \(step)")
            #expect(index.oldestID == order.first)
        }
        #expect(index.count == order.count)
        #expect(index.totalBytes == sizes.values.reduce(0, +))
        for (id, key) in keys {
            let variants = Set(keys.filter { $0.value.primary == key.primary }.keys)
            #expect(Set(index.ids(primary: key.primary)) == variants)
            #expect(index.ids(primary: key.primary).count == variants.count)
            #expect(Set(index.ids(url: key.url)) == Set(keys.filter { $0.value.url == key.url }.keys), "\(id)")
        }
        for path in 0..<4 where !keys.values.contains(where: { $0.url == "http://index.test/r\(path)" }) {
            #expect(index.ids(url: "http://index.test/r\(path)").isEmpty)
        }
    }

    /// A small deterministic generator for the run above.
    struct SplitMix {
        var state: UInt64
        init(seed: UInt64) { state = seed }
        mutating func next() -> UInt64 {
            state &+= 0x9e37_79b9_7f4a_7c15
            var value = state
            value = (value ^ (value >> 30)) &* 0xbf58_476d_1ce4_e5b9
            value = (value ^ (value >> 27)) &* 0x94d0_49bb_1331_11eb
            return value ^ (value >> 31)
        }
    }

    @Test func aSetOfIdentifiersShrinksBackToOneAndGrowsAgain() {
        var ids = IDs()
        #expect(ids.isEmpty && ids.count == 0 && Array(ids).isEmpty)
        ids.insert("a")
        ids.insert("a")
        #expect(Array(ids) == ["a"])
        ids.insert("b")
        ids.insert("c")
        #expect(Set(ids) == ["a", "b", "c"] && ids.count == 3)
        ids.remove("b")
        ids.remove("missing")
        #expect(Set(ids) == ["a", "c"])
        ids.remove("a")
        #expect(Array(ids) == ["c"] && ids.count == 1)
        ids.insert("d")
        #expect(Set(ids) == ["c", "d"])
        ids.remove("c")
        ids.remove("d")
        #expect(ids.isEmpty && Array(ids).isEmpty)
    }
}
