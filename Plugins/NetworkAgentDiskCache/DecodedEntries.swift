import Foundation

/// An entry decoded from an entry file, with the exact bytes it was decoded from.
///
/// `EntryCodec.decode` is a pure function of the bytes: when a file holds exactly `bytes` again, decoding it gives
/// `entry` (checksums, key and fields included), so a store can compare the bytes it read with these instead of
/// decoding them (a checksum over the whole entry, the strings, the response URL and the field dictionary per hit).
package struct Decoded: Sendable {
    package let bytes: Data
    package let entry: CachedEntry

    package init(bytes: Data, entry: CachedEntry) {
        self.bytes = bytes
        self.entry = entry
    }
}

/// The decoded entries a ``DiskStore`` (or `RedisStore`) keeps for its most used files, by identifier, within a memory budget.
///
/// Only a shortcut of decoding: the store still reads the file on every hit and uses a kept entry only when the
/// file's bytes equal the ones it was decoded from. What is kept never decides what is served, so keeping too
/// little (or nothing) changes nothing but the CPU a hit takes. Not thread-safe: the store keeps it in its
/// `Locked` state.
package struct DecodedEntries: Sendable {
    private var entries: [String: Decoded] = [:]
    private var charged = 0
    /// The memory the kept entries may take, counting each entry's bytes twice (the file's bytes and the decoded
    /// body).
    package let budget: Int

    package init(budget: Int) {
        self.budget = max(0, budget)
    }

    package var count: Int { entries.count }

    package subscript(id: String) -> Decoded? { entries[id] }

    /// Keeps an entry decoded from a file; an entry over an eighth of the budget is not kept. When the budget is
    /// full, everything kept is dropped first (the entries still in use are kept again on their next read): a
    /// constant cost per insert, where picking entries to drop one by one would walk the table.
    package mutating func insert(_ decoded: Decoded, for id: String) {
        let cost = Self.cost(decoded)
        guard cost <= budget / 8 else { return }
        remove(id)
        if charged + cost > budget { removeAll() }
        entries[id] = decoded
        charged += cost
    }

    /// Drops what is kept for an identifier (its file was replaced or removed).
    package mutating func remove(_ id: String) {
        guard let old = entries.removeValue(forKey: id) else { return }
        charged -= Self.cost(old)
    }

    package mutating func removeAll() {
        entries.removeAll(keepingCapacity: true)
        charged = 0
    }

    private static func cost(_ decoded: Decoded) -> Int {
        2 * decoded.bytes.count + 256
    }
}
