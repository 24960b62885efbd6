import Foundation

/// An executable built next to the test bundle by `swift build` (e.g. `RedisCacheWorker`).
///
/// - Parameter name: The executable target's name.
/// - Returns: Its path, found in the test bundle's directory or up to three above it.
/// - Throws: `CocoaError(.fileNoSuchFile)` when it was not built.
public func siblingExecutable(_ name: String) throws -> URL {
    let testBinary = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
    var directory = testBinary.deletingLastPathComponent()
    for _ in 0..<4 {
        let candidate = directory.appendingPathComponent(name)
        if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
        directory = directory.deletingLastPathComponent()
    }
    throw CocoaError(
        .fileNoSuchFile,
        userInfo: [NSFilePathErrorKey: "\(name) next to \(testBinary.path); run swift build first"]
    )
}
