import Foundation
import Testing

/// CCurl's own header declares libcurl's option, info, error and flag numbers by hand; this compiles one C program
/// against it and against libcurl's real header (`libcurl4-openssl-dev`) and compares every number it declares.
@Suite struct CCurlHeaderTests {
    static let ownHeader = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Sources/CCurl/include/CCurl.h")

    static let realHeaderDirectory = [
        "/usr/include/x86_64-linux-gnu", "/usr/include/aarch64-linux-gnu", "/usr/include",
    ]
    .first { FileManager.default.fileExists(atPath: "\($0)/curl/curl.h") }

    static let isCI = ProcessInfo.processInfo.environment["CI"] == "true"

    /// The constants the header declares: enumerators and `#define`s whose names start with `CURL`, except the
    /// header's own `…CCURL…` helpers.
    static func declaredConstants(in header: String) -> [String] {
        var names: [String] = []
        for line in header.split(separator: "\n") {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            var name: Substring?
            if trimmed.hasPrefix("#define ") {
                name = trimmed.dropFirst("#define ".count).prefix { !$0.isWhitespace && $0 != "(" }
            } else if trimmed.hasPrefix("CURL"), trimmed.contains("=") {
                name = trimmed.prefix { !$0.isWhitespace && $0 != "=" }
            }
            guard let name, name.hasPrefix("CURL"), !name.contains("CCURL") else { continue }
            names.append(String(name))
        }
        return names
    }

    @Test(
        "every constant of CCurl.h equals libcurl's",
        .enabled(
            if: realHeaderDirectory != nil || isCI,
            "needs libcurl's header (apt install libcurl4-openssl-dev); required when CI=true"
        )
    )
    func constantsMatchLibcurl() throws {
        let realDirectory = try #require(Self.realHeaderDirectory, "CI=true but libcurl's header is not installed")
        let header = try String(contentsOf: Self.ownHeader, encoding: .utf8)
        let names = Self.declaredConstants(in: header)
        #expect(names.count > 100)
        // The layouts of the structures libcurl hands back are compared too.
        let layouts = [
            "sizeof(CURLMsg)", "offsetof(CURLMsg, data)", "sizeof(struct curl_slist)",
            "offsetof(curl_version_info_data, features)", "offsetof(curl_version_info_data, protocols)",
            "offsetof(curl_version_info_data, nghttp2_version)", "offsetof(curl_version_info_data, quic_version)",
        ]
        let body = (names + layouts).map { "    printf(\"%s %lld\\n\", \"\($0)\", (long long)(\($0)));" }
            .joined(separator: "\n")
        let own = try run(include: "\"CCurl.h\"", flags: ["-I", Self.ownHeader.deletingLastPathComponent().path], body)
        let real = try run(include: "<curl/curl.h>", flags: ["-I", realDirectory], body)
        let ownValues = Dictionary(own.map { ($0.0, $0.1) }) { first, _ in first }
        for (name, value) in real {
            #expect(ownValues[name] == value, "\(name): CCurl.h says \(ownValues[name] ?? "nothing"), libcurl \(value)")
        }
        #expect(own.count == names.count + layouts.count && real.count == own.count)
    }

    /// Compiles and runs `main` printing each constant, with `include`; returns (name, value) pairs.
    private func run(include: String, flags: [String], _ body: String) throws -> [(String, String)] {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("ccurl-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let source = directory.appendingPathComponent("constants.c")
        let binary = directory.appendingPathComponent("constants")
        try
            "#include <stddef.h>\n#include <stdio.h>\n#include \(include)\nint main(void) {\n\(body)\n    return 0;\n}\n"
            .write(to: source, atomically: true, encoding: .utf8)
        try #require(execute("/usr/bin/env", ["cc"] + flags + ["-o", binary.path, source.path]).status == 0)
        let result = try execute(binary.path, [])
        try #require(result.status == 0)
        return result.output.split(separator: "\n").map { line in
            guard let space = line.lastIndex(of: " ") else { return (String(line), "") }
            return (String(line[..<space]), String(line[line.index(after: space)...]))
        }
    }

    private func execute(_ path: String, _ arguments: [String]) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: output, as: UTF8.self))
    }
}
