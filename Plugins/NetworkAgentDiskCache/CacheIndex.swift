/// The in-memory index of a store: entries by identifier in least-recently-used order, with their sizes, and the
/// lookups the cache needs — by primary key (the variants of one resource for one user) and by URL (everything an
/// unsafe request invalidates). Every operation is O(1) in the number of entries (per variant or URL entry for
/// the secondary lookups). Not thread-safe: stores keep it in a `Locked`.
struct CacheIndex<Value> {
    struct Node {
        let key: CacheKey
        var value: Value
        var bytes: Int
        /// Bumped on every write of the identifier, so a stale reader does not remove a newer entry.
        var generation: UInt64
        fileprivate var newer: String?
        fileprivate var older: String?
    }

    private(set) var nodes: [String: Node] = [:]
    private var newest: String?
    private var oldest: String?
    private var byPrimary: [String: IDs] = [:]
    private var byURL: [String: IDs] = [:]
    private var nextGeneration: UInt64 = 1
    /// The sum of the sizes of all entries.
    private(set) var totalBytes = 0

    var count: Int { nodes.count }

    init() {}

    /// An empty index with room for `capacity` entries without rehashing.
    init(minimumCapacity capacity: Int) {
        nodes.reserveCapacity(capacity)
        byPrimary.reserveCapacity(capacity)
        byURL.reserveCapacity(capacity)
    }

    /// Inserts or replaces an entry as the most recently used one.
    ///
    /// - Returns: The generation of the new node.
    @discardableResult
    mutating func insert(id: String, key: CacheKey, value: Value, bytes: Int) -> UInt64 {
        remove(id: id)
        let generation = nextGeneration
        nextGeneration += 1
        nodes[id] = Node(key: key, value: value, bytes: bytes, generation: generation, newer: nil, older: newest)
        // Read, changed and written back rather than changed in place (`nodes[newest]?.newer = id`,
        // `byPrimary[primary, default: IDs()].insert(id)`): each in-place change goes through the dictionary's
        // `modify` accessor, whose coroutine frame was a heap allocation per call, three per stored entry.
        if let newest { link(newest, newer: id) }
        newest = id
        if oldest == nil { oldest = id }
        Self.file(id, under: key.primary, in: &byPrimary)
        Self.file(id, under: key.url, in: &byURL)
        totalBytes += bytes
        return generation
    }

    /// Sets the entry after `id` in the order of use (read and written back, see ``insert(id:key:value:bytes:)``).
    private mutating func link(_ id: String, newer: String?) {
        guard var node = nodes[id] else { return }
        node.newer = newer
        nodes[id] = node
    }

    /// Sets the entry before `id` in the order of use.
    private mutating func link(_ id: String, older: String?) {
        guard var node = nodes[id] else { return }
        node.older = older
        nodes[id] = node
    }

    /// Removes `id` from the identifiers filed under `key` in a secondary table, and the key when none is left.
    private static func unfile(_ id: String, under key: String, in table: inout [String: IDs]) {
        guard var ids = table[key] else { return }
        if ids.count > 1 { table[key] = nil }
        ids.remove(id)
        table[key] = ids.isEmpty ? nil : ids
    }

    /// Adds `id` to the identifiers filed under `key` in a secondary table.
    private static func file(_ id: String, under key: String, in table: inout [String: IDs]) {
        guard var ids = table[key] else {
            table[key] = IDs(id)
            return
        }
        // A set (more than one identifier under a key: variants, methods or users of one resource, rare) is taken
        // out first, so that it is uniquely referenced and adding to it copies nothing.
        if ids.count > 1 { table[key] = nil }
        ids.insert(id)
        table[key] = ids
    }

    /// Changes the value filed under `id`, if any, leaving its place in the order of use alone.
    mutating func setValue(id: String, _ change: (inout Value) -> Void) {
        guard var node = nodes[id] else { return }
        change(&node.value)
        nodes[id] = node
    }

    /// Marks an entry as the most recently used one.
    mutating func touch(id: String) {
        guard newest != id, let node = nodes[id] else { return }
        unlink(id: id, node: node)
        if var moved = nodes[id] {
            moved.older = newest
            moved.newer = nil
            nodes[id] = moved
        }
        if let newest { link(newest, newer: id) }
        newest = id
        if oldest == nil { oldest = id }
    }

    /// Removes an entry.
    ///
    /// - Returns: The removed node, if there was one.
    @discardableResult
    mutating func remove(id: String) -> Node? {
        guard let node = nodes[id] else { return nil }
        unlink(id: id, node: node)
        nodes[id] = nil
        totalBytes -= node.bytes
        Self.unfile(id, under: node.key.primary, in: &byPrimary)
        Self.unfile(id, under: node.key.url, in: &byURL)
        return node
    }

    /// The least recently used entry's identifier.
    var oldestID: String? { oldest }

    /// The identifiers of every variant filed under a primary key.
    func ids(primary: String) -> IDs { byPrimary[primary] ?? IDs() }

    /// The identifiers of every entry for a normalised URL, whatever the method, user or variant.
    func ids(url: String) -> IDs { byURL[url] ?? IDs() }

    /// Every identifier, least recently used first (O(n), for tests and diagnostics).
    var idsFromOldest: [String] {
        var result: [String] = []
        var cursor = oldest
        while let id = cursor {
            result.append(id)
            cursor = nodes[id]?.newer
        }
        return result
    }

    private mutating func unlink(id: String, node: Node) {
        if let newer = node.newer { link(newer, older: node.older) } else { newest = node.older }
        if let older = node.older { link(older, newer: node.newer) } else { oldest = node.newer }
    }
}

/// The identifiers filed under one primary key or URL. Nearly always one: a resource's variants and a URL's
/// methods and users are few, so a single identifier is kept as it is, without a set of its own (an allocation
/// per stored entry and per secondary lookup table).
struct IDs: Sequence {
    private enum Storage {
        case one(String)
        case many(Set<String>)
    }

    private var storage: Storage?

    init() {}

    /// The identifiers of one entry.
    init(_ id: String) {
        storage = .one(id)
    }

    var count: Int {
        switch storage {
        case nil: 0
        case .one: 1
        case .many(let ids): ids.count
        }
    }

    var isEmpty: Bool { storage == nil }

    mutating func insert(_ id: String) {
        switch storage {
        case nil: storage = .one(id)
        case .one(let existing): storage = existing == id ? .one(id) : .many([existing, id])
        case .many(var ids):
            storage = nil  // the set's only reference while it is changed
            ids.insert(id)
            storage = .many(ids)
        }
    }

    mutating func remove(_ id: String) {
        switch storage {
        case nil: break
        case .one(let existing): if existing == id { storage = nil }
        case .many(var ids):
            storage = nil
            ids.remove(id)
            if ids.count == 1, let last = ids.first {
                storage = .one(last)
            } else if !ids.isEmpty {
                storage = .many(ids)
            }
        }
    }

    struct Iterator: IteratorProtocol {
        fileprivate var single: String?
        fileprivate var rest: Set<String>.Iterator?

        mutating func next() -> String? {
            if let id = single {
                single = nil
                return id
            }
            return rest?.next()
        }
    }

    func makeIterator() -> Iterator {
        switch storage {
        case nil: Iterator(single: nil, rest: nil)
        case .one(let id): Iterator(single: id, rest: nil)
        case .many(let ids): Iterator(single: nil, rest: ids.makeIterator())
        }
    }
}
