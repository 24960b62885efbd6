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
