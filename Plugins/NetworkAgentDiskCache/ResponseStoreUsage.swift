/// A number of entries and the bytes they take: a store's contents, or what one write evicted.
public struct ResponseStoreUsage: Hashable, Sendable {
    /// The number of entries.
    public var entryCount: Int
    /// Their total size in bytes, as the store counts it (file sizes for ``DiskStore``).
    public var totalBytes: Int

    /// Creates a usage figure.
    ///
    /// - Parameters:
    ///   - entryCount: The number of entries.
    ///   - totalBytes: Their total size in bytes.
    public init(entryCount: Int = 0, totalBytes: Int = 0) {
        self.entryCount = entryCount
        self.totalBytes = totalBytes
    }
}
