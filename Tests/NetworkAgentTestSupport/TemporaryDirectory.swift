import Foundation

/// A directory under the temporary directory, removed by ``remove()``.
public struct TemporaryDirectory: Sendable {
    /// Where it is.
    public let url: URL

    /// Creates a fresh, empty directory.
    ///
    /// - Parameter prefix: The start of its name.
    /// - Throws: When it cannot be created.
    public init(prefix: String = "diskcache") throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("\(prefix)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    /// Removes the directory and everything in it.
    public func remove() {
        try? FileManager.default.removeItem(at: url)
    }
}
