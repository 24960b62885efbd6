import Foundation
import Testing

/// The package keeps one lock type, the core's `Locked`: a copy drifts (NetworkAgentCurl's own `CurlLock` had lost
/// typed throws and `sending`). These read the package's sources.
@Suite struct OneLockTests {
    static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The Swift files of the library targets, relative to the package root.
    static func librarySources() throws -> [(path: String, text: String)] {
        var files: [(String, String)] = []
        for folder in ["Sources", "Plugins"] {
            let base = root.appendingPathComponent(folder)
            guard let walker = FileManager.default.enumerator(at: base, includingPropertiesForKeys: nil) else {
                continue
            }
            for case let url as URL in walker where url.pathExtension == "swift" {
                let relative = String(url.path.dropFirst(root.path.count + 1))
                files.append((relative, try String(contentsOf: url, encoding: .utf8)))
            }
        }
        return files
    }

    @Test func onlyLockedMakesAMutex() throws {
        let sources = try Self.librarySources()
        #expect(sources.count > 50)
        let makers = sources.filter { $0.text.contains("pthread_mutex_init(") }.map(\.path)
        #expect(makers == ["Sources/NetworkAgent/Locked.swift"])
        // Locked's own comment names `Mutex`, the type it stands in for.
        let otherLocks = sources.filter { file in
            file.path != "Sources/NetworkAgent/Locked.swift"
                && ["NSLock()", "Mutex<", "os_unfair_lock"].contains { file.text.contains($0) }
        }
        #expect(otherLocks.map(\.path) == [])
    }

    @Test func lockedChecksEveryPthreadResult() throws {
        let text = try String(
            contentsOf: Self.root.appendingPathComponent("Sources/NetworkAgent/Locked.swift"),
            encoding: .utf8
        )
        let calls = text.split(separator: "\n").filter { $0.contains("pthread_mutex_") && $0.contains("(mutex") }
        #expect(calls.count == 4)
        // Each call's result is kept (and checked by the precondition on the next line), never dropped.
        for line in calls {
            #expect(line.contains("= pthread_mutex_"), "unchecked: \(line)")
        }
    }
}
