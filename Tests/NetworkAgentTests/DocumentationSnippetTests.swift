import Foundation
import NetworkAgentTestServer
import Testing

/// Type-checks the Swift snippets of README.md and Docs/*.md against the built modules, so the docs cannot rot.
///
/// Every fenced `swift` block must follow a marker line: `<!-- snippet: NAME -->` puts it in group NAME (the
/// blocks of one group in one file are compiled together, in order, as a `main.swift`), and
/// `<!-- snippet: skip -->` leaves it out. Only code that needs another library may be skipped: a package manifest,
/// a block importing a module this package does not build, or the "Before:" side of a migration guide (Moya or
/// Alamofire code); the "After:" side always compiles.
///
/// The DocC examples are checked too: every `swift` block of a `///` comment under Sources/ and Plugins/ and of a
/// `.docc` article, each on its own, after the imports of every product, beside ``docContext(for:)``, a file
/// declaring the names the examples take as given (`Api`, `provider`, `chunks`…). They need no marker; a
/// `<!-- snippet: skip -->` line right above one leaves it out (the example of a symbol that is not public).
@Suite struct DocumentationSnippetTests {
    struct Snippet: CustomStringConvertible {
        let file: String
        let group: String
        var code: String
        var description: String { "\(file)#\(group)" }
    }

    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    static func documents() -> [URL] {
        let docs = packageRoot.appendingPathComponent("Docs")
        let guides = (try? FileManager.default.contentsOfDirectory(at: docs, includingPropertiesForKeys: nil)) ?? []
        return [packageRoot.appendingPathComponent("README.md")]
            + guides.filter { $0.pathExtension == "md" }.sorted { $0.path < $1.path }
    }

    /// The snippet groups of one Markdown file; blocks without a marker are reported as issues.
    static func snippets(in url: URL) throws -> (groups: [Snippet], unmarked: [Int]) {
        let lines = try String(contentsOf: url, encoding: .utf8).components(separatedBy: "\n")
        var groups: [Snippet] = []
        var unmarked: [Int] = []
        var index = 0
        while index < lines.count {
            guard lines[index].trimmingCharacters(in: .whitespaces) == "```swift" else {
                index += 1
                continue
            }
            let marker = index > 0 ? lines[index - 1].trimmingCharacters(in: .whitespaces) : ""
            var end = index + 1
            while end < lines.count, lines[end].trimmingCharacters(in: .whitespaces) != "```" { end += 1 }
            let code = lines[(index + 1)..<min(end, lines.count)].joined(separator: "\n")
            if marker.hasPrefix("<!-- snippet: "), marker.hasSuffix(" -->") {
                let name = String(marker.dropFirst("<!-- snippet: ".count).dropLast(" -->".count))
                if name != "skip" {
                    if let existing = groups.firstIndex(where: { $0.group == name }) {
                        groups[existing].code += "\n" + code
                    } else {
                        groups.append(Snippet(file: url.lastPathComponent, group: name, code: code))
                    }
                }
            } else {
                unmarked.append(index + 1)
            }
            index = end + 1
        }
        return (groups, unmarked)
    }

    /// The folder holding the built `.swiftmodule`s next to this test binary.
    static func modulesDirectory() throws -> URL {
        let executable = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        var directory = executable.deletingLastPathComponent()
        for _ in 0..<3 {
            let modules = directory.appendingPathComponent("Modules")
            if FileManager.default.fileExists(atPath: modules.appendingPathComponent("NetworkAgent.swiftmodule").path) {
                return modules
            }
            directory = directory.deletingLastPathComponent()
        }
        throw CocoaError(.fileNoSuchFile, userInfo: [NSFilePathErrorKey: "Modules next to \(executable.path)"])
    }

    static let allSnippets: [Snippet] = documents().flatMap { (try? snippets(in: $0).groups) ?? [] }

    /// The Swift files and `.docc` articles of the library targets, whose DocC examples are checked.
    static func documentedFiles() -> [URL] {
        var files: [URL] = []
        for folder in ["Sources", "Plugins"] {
            let root = packageRoot.appendingPathComponent(folder)
            let enumerator = FileManager.default.enumerator(at: root, includingPropertiesForKeys: nil)
            while let url = enumerator?.nextObject() as? URL {
                if url.pathExtension == "swift" || (url.pathExtension == "md" && url.path.contains(".docc/")) {
                    files.append(url)
                }
            }
        }
        return files.sorted { $0.path < $1.path }
    }

    /// The blocks marked `<!-- snippet: skip -->` in one Markdown file: their line, the last text line before the
    /// marker, and their code.
    static func skippedBlocks(in url: URL) throws -> [(line: Int, lead: String, code: String)] {
        let lines = try String(contentsOf: url, encoding: .utf8).components(separatedBy: "\n")
            .map { $0.trimmingCharacters(in: .whitespaces) }
        var skipped: [(line: Int, lead: String, code: String)] = []
        for (index, line) in lines.enumerated() where line == "```swift" && index > 0 {
            guard lines[index - 1] == "<!-- snippet: skip -->" else { continue }
            let lead = lines[..<(index - 1)].last { !$0.isEmpty } ?? ""
            let end = lines[(index + 1)...].firstIndex(of: "```") ?? lines.count
            skipped.append((index + 1, lead, lines[(index + 1)..<end].joined(separator: "\n")))
        }
        return skipped
    }

    @Test func onlyCodeNeedingAnotherLibraryIsSkipped() throws {
        let ours = try FileManager.default.contentsOfDirectory(atPath: Self.modulesDirectory().path)
            .filter { $0.hasSuffix(".swiftmodule") }.map { String($0.dropLast(".swiftmodule".count)) }
        #expect(ours.contains("NetworkAgent"))
        for document in Self.documents() {
            for block in try Self.skippedBlocks(in: document) {
                let imports = block.code.split(separator: "\n").filter { $0.hasPrefix("import ") }
                    .map { String($0.dropFirst("import ".count)) }
                let needsAnotherLibrary =
                    block.lead == "Before:" || imports.contains { !ours.contains($0) }
                    || block.code.contains("Package.swift") || block.code.contains("PackageDescription")
                #expect(
                    needsAnotherLibrary,
                    """
                    \(document.lastPathComponent):\(block.line) is skipped but needs no other library: give it a \
                    snippet group so that it compiles
                    """
                )
            }
        }
    }

    @Test func everyMigrationExampleHasItsAfterSideCompiled() throws {
        for guide in ["MigratingFromMoya.md", "MigratingFromAlamofire.md"] {
            let url = Self.packageRoot.appendingPathComponent("Docs").appendingPathComponent(guide)
            let text = try String(contentsOf: url, encoding: .utf8)
            let befores = text.components(separatedBy: "\nBefore:\n").count - 1
            let afters = text.components(separatedBy: "\nAfter:\n\n<!-- snippet: ").count - 1
            let skippedAfters = text.components(separatedBy: "\nAfter:\n\n<!-- snippet: skip -->").count - 1
            #expect(befores > 0, "\(guide) has no Before: examples")
            #expect(afters == befores, "\(guide): \(befores) Before: examples but \(afters) marked After: blocks")
            #expect(skippedAfters == 0, "\(guide): an After: block is skipped")
            #expect(Self.allSnippets.contains { $0.file == guide }, "\(guide) has no compiled snippet")
        }
    }

    @Test func everySwiftBlockIsMarked() throws {
        for document in Self.documents() {
            let unmarked = try Self.snippets(in: document).unmarked
            #expect(
                unmarked.isEmpty,
                "\(document.lastPathComponent): swift blocks without a snippet marker at lines \(unmarked)"
            )
        }
        #expect(Self.allSnippets.contains { $0.file == "README.md" && $0.group == "quickstart" })
    }

    /// The `swift` blocks of one file's `///` comments (a `.swift` file) or of one DocC article (a `.md` file), one
    /// snippet each, named by file and line.
    static func docSnippets(in url: URL) throws -> [Snippet] {
        let isSource = url.pathExtension == "swift"
        var lines = try String(contentsOf: url, encoding: .utf8).components(separatedBy: "\n")
        if isSource {
            // Keep the text of `///` lines (one space after the slashes dropped); anything else ends a block.
            lines = lines.map { line in
                let trimmed = line.trimmingCharacters(in: .whitespaces)
                guard trimmed.hasPrefix("///") else { return "\u{0}" }
                let text = trimmed.dropFirst(3)
                return String(text.hasPrefix(" ") ? text.dropFirst() : text)
            }
        }
        let relative = String(url.path.dropFirst(packageRoot.path.count + 1))
        var snippets: [Snippet] = []
        var index = 0
        while index < lines.count {
            guard lines[index].trimmingCharacters(in: .whitespaces) == "```swift" else {
                index += 1
                continue
            }
            let marker = index > 0 ? lines[index - 1].trimmingCharacters(in: .whitespaces) : ""
            var end = index + 1
            while end < lines.count, lines[end].trimmingCharacters(in: .whitespaces) != "```", lines[end] != "\u{0}" {
                end += 1
            }
            if marker != "<!-- snippet: skip -->" {
                let code = lines[(index + 1)..<min(end, lines.count)].joined(separator: "\n")
                snippets.append(Snippet(file: relative, group: "line \(index + 1)", code: code))
            }
            index = end + 1
        }
        return snippets
    }

    static let allDocSnippets: [Snippet] = documentedFiles().flatMap { (try? docSnippets(in: $0)) ?? [] }

    /// What every DocC example is compiled after: the imports of every product, then ``docContext``.
    static let docImports = """
        import Foundation
        import NetworkAgent
        import NetworkAgentAuth
        import NetworkAgentCurl
        import NetworkAgentDiskCache
        import NetworkAgentGzip
        import NetworkAgentLogging
        import NetworkAgentMetrics
        import NetworkAgentRetry
        import NetworkAgentTestServer
        import NetworkAgentTesting
        import NetworkAgentTokenRefresh
        import Testing

        #if canImport(FoundationNetworking)
        import FoundationNetworking
        #endif

        """

    /// The names DocC examples use without declaring them, each with its declaration. They go into a second file
    /// beside the example, all but those the example declares itself (its own `enum Api`, its own `let provider`).
    static let docContext: [(name: String, declaration: String)] = [
        (
            "Api",
            """
            enum Api: NetworkAgentEndpoint {
                case posts, events, login, legacy
                case post(id: Int)
                case refresh(String)
                var baseURL: URL { URL(fileURLWithPath: "/") }
                var path: String { "/" }
                var method: HTTPMethod { .get }
                var task: HTTPTask { .requestPlain }
            }
            """
        ),
        (
            "PokeApi",
            """
            enum PokeApi: NetworkAgentEndpoint {
                case pokemon(String)
                case list
                var baseURL: URL { URL(fileURLWithPath: "/") }
                var path: String { "/" }
                var method: HTTPMethod { .get }
                var task: HTTPTask { .requestPlain }
            }
            """
        ),
        ("saved", "let saved = (access: \"access\", refresh: \"refresh\")"),
        (
            "TokenResponse",
            """
            struct TokenResponse: Decodable {
                let accessToken: String
                let refreshToken: String?
            }
            """
        ),
        ("myLogger", "struct Logger { func info(_ message: String) {} }\nlet myLogger = Logger()"),
        (
            "keychain",
            "struct Keychain { func accessToken() async throws -> String? { nil } }\nlet keychain = Keychain()"
        ),
        (
            "counter",
            """
            final class EventCounter: Sendable {
                private let events = Mutex<[NetworkAgentEvent]>([])
                func add(_ event: NetworkAgentEvent) { events.withLock { $0.append(event) } }
            }
            let counter = EventCounter()
            """
        ),
        ("provider", "let provider = NetworkAgentProvider<Api>(plugins: [])"),
        ("request", "let request = URLRequest(url: URL(fileURLWithPath: \"/\"))"),
        ("chunks", "let chunks: [Data] = []"),
        ("payload", "let payload = Data()"),
        ("legacyKey", "let legacyKey = \"key\""),
        ("refresher", "let refresher = TokenRefresher(token: nil) { _, _ in .bearer(jwt: \"\") }"),
    ]

    /// The second file of a DocC example: ``docContext`` without the names `code` declares.
    static func docContext(for code: String) -> String {
        let given = docContext.filter { entry in
            let declaration = #"\b(let|var|enum|struct|class|actor|func)\s+"# + entry.name + #"\b"#
            return code.range(of: declaration, options: .regularExpression) == nil
        }
        return "import Synchronization\n\n" + given.map(\.declaration).joined(separator: "\n\n") + "\n"
    }

    @Test("18.10 the DocC examples of Sources/, Plugins/ and the .docc articles are found")
    func docExamplesAreFound() {
        #expect(Self.allDocSnippets.count >= 20)
        #expect(Self.allDocSnippets.contains { $0.file.hasSuffix("NetworkAgentProvider.swift") })
        #expect(Self.allDocSnippets.contains { $0.file.hasSuffix("NetworkAgent.docc/NetworkAgent.md") })
    }

    @Test("18.10 every DocC example type-checks against the built modules", arguments: allDocSnippets)
    func docExampleTypeChecks(_ snippet: Snippet) async throws {
        try await Self.typeCheck(
            Snippet(file: snippet.file, group: snippet.group, code: Self.docImports + snippet.code),
            beside: Self.docContext(for: snippet.code)
        )
    }

    @Test(arguments: allSnippets)
    func snippetTypeChecks(_ snippet: Snippet) async throws {
        try await Self.typeCheck(snippet)
    }

    /// Type-checks one snippet as a `main.swift` against the built modules, with `context` as a second file.
    static func typeCheck(_ snippet: Snippet, beside context: String? = nil) async throws {
        let modules = try Self.modulesDirectory()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("snippet-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let source = directory.appendingPathComponent("main.swift")
        try snippet.code.write(to: source, atomically: true, encoding: .utf8)
        var sources = [source.path]
        if let context {
            let file = directory.appendingPathComponent("Context.swift")
            try (docImports + context).write(to: file, atomically: true, encoding: .utf8)
            sources.append(file.path)
        }

        let result = try await ChildProcess.run(
            "swiftc",
            [
                "-typecheck", "-swift-version", "6", "-I", modules.path,
                "-I", Self.packageRoot.appendingPathComponent("Sources/CZlib").path,
                "-I", Self.packageRoot.appendingPathComponent("Sources/CCurl/include").path,
            ] + sources
        )
        #expect(result.status == 0, "\(snippet) does not compile:\n\(result.output)\(result.error)")
    }
}
