import Foundation
import NetworkAgent
import NetworkAgentTestServer

/// The HTTP server the scenarios talk to, running outside the bench process: nginx, or the loopback server in a
/// child process. Stopped by ``stop()`` (idempotent), at the end of the run or on SIGINT/SIGTERM (``Cleanup``).
final class BenchServer: Sendable {
    /// `http://127.0.0.1:<port>`.
    let baseURL: URL
    /// What the table says about it, e.g. `nginx 1.22.1` or `loopback`.
    let label: String
    /// The same routes over HTTPS with HTTP/2 (ALPN), when the server has them (nginx with openssl installed).
    let tls: TLS?
    /// Why there is no ``tls``, for the rows that need it.
    let tlsUnavailableReason: String?
    private let stopAction: Locked<(@Sendable () -> Void)?>

    /// nginx's HTTPS port: its URL, the CA that signed its certificate, and the prefix where nginx writes its logs.
    struct TLS: Sendable {
        /// `https://127.0.0.1:<port>`, HTTP/2 through ALPN (HTTP/1.1 as fallback).
        let baseURL: URL
        /// The test CA's certificate (PEM), which a client must trust to reach ``baseURL``.
        let certificateAuthority: URL
        /// nginx's prefix: `counted.log` there has one line per request of `/counted/`:
        /// `<connection serial number> <protocol> <request URI>`.
        let directory: URL
    }

    init(
        baseURL: URL,
        label: String,
        tls: TLS? = nil,
        tlsUnavailableReason: String? = nil,
        stop: @escaping @Sendable () -> Void
    ) {
        self.baseURL = baseURL
        self.label = label
        self.tls = tls
        self.tlsUnavailableReason = tls == nil ? (tlsUnavailableReason ?? "the server has no HTTPS port") : nil
        self.stopAction = Locked(stop)
    }

    /// The URL of a route, e.g. ``BenchRoutes/plainDocument``.
    func url(_ route: String) -> URL {
        baseURL.appending(path: route)
    }

    /// Stops the server; later calls do nothing.
    func stop() {
        let action = stopAction.withLock { action in
            defer { action = nil }
            return action
        }
        action?()
    }

    /// Starts the server `choice` asks for: nginx when it is installed (for `.automatic`), else the loopback server.
    ///
    /// - Parameters:
    ///   - choice: Which server.
    ///   - executable: This program, re-executed with `--serve-loopback` for the loopback server.
    /// - Throws: ``BenchFailure`` when the server asked for cannot be started.
    static func start(_ choice: BenchOptions.ServerChoice, executable: String) async throws -> BenchServer {
        let server: BenchServer
        switch choice {
        case .nginx:
            server = try await startNginx()
        case .loopback:
            server = try startLoopback(executable: executable)
        case .automatic:
            if nginxExecutable() != nil {
                do {
                    server = try await startNginx()
                } catch {
                    log("nginx is installed but did not start (\(error)); using the loopback server")
                    server = try startLoopback(executable: executable)
                }
            } else {
                server = try startLoopback(executable: executable)
            }
        }
        return server
    }

    // MARK: - nginx

    static func nginxExecutable() -> String? {
        Executables.find("nginx", alsoIn: ["/usr/sbin"])
    }

    /// The package's `Scripts/nginx` folder: next to this source file's package, or under the current directory.
    static func nginxScripts() -> URL? {
        let fromSource = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appending(path: "Scripts/nginx")
        let fromWorkingDirectory = URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
            .appending(path: "Scripts/nginx")
        return [fromSource, fromWorkingDirectory].first {
            FileManager.default.isExecutableFile(atPath: $0.appending(path: "start").path)
        }
    }

    private static func startNginx() async throws -> BenchServer {
        guard let nginx = nginxExecutable() else { throw BenchFailure("nginx is not installed") }
        guard let scripts = nginxScripts() else { throw BenchFailure("Scripts/nginx/start not found") }
        let started = try await ChildProcess.run(scripts.appending(path: "start").path, [])
        guard started.status == 0 else { throw BenchFailure("Scripts/nginx/start failed: \(started.errorSummary)") }
        var values: [String: String] = [:]
        for line in started.output.split(separator: "\n") {
            guard let equals = line.firstIndex(of: "=") else { continue }
            values[String(line[..<equals])] = String(line[line.index(after: equals)...])
        }
        guard let directory = values["NGINX_DIR"], let port = values["NGINX_PORT"],
            let url = URL(string: "http://127.0.0.1:\(port)")
        else {
            throw BenchFailure("Scripts/nginx/start printed no port: \(started.output)")
        }
        let version = try? await ChildProcess.run(nginx, ["-v"])
        let label = version?.error.split(separator: "/").last.map {
            "nginx \($0.trimmingCharacters(in: .whitespacesAndNewlines))"
        }
        let stopScript = scripts.appending(path: "stop").path
        var tls: TLS?
        if let https = values["NGINX_HTTPS_URL"].flatMap(URL.init(string:)), let ca = values["NGINX_TEST_CA"] {
            tls = TLS(
                baseURL: https,
                certificateAuthority: URL(fileURLWithPath: ca),
                directory: URL(fileURLWithPath: directory)
            )
        }
        let reason = "Scripts/nginx/start printed no NGINX_HTTPS_URL (openssl not installed?)"
        return BenchServer(baseURL: url, label: label ?? "nginx", tls: tls, tlsUnavailableReason: reason) {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: stopScript)
            process.arguments = [directory]
            process.standardInput = FileHandle.nullDevice
            do {
                try process.run()
                process.waitUntilExit()
            } catch {
                log("could not stop nginx in \(directory): \(error)")
            }
        }
    }

    // MARK: - Loopback server in a child process

    /// Starts `executable --serve-loopback` and reads the port from its first line. The child serves until its
    /// standard input closes, which also happens when this process dies.
    ///
    /// - Parameters:
    ///   - executable: This program.
    ///   - gzipBody: A file the child serves at ``BenchRoutes/gzipBomb`` with `Content-Encoding: gzip`.
    static func startLoopback(executable: String, gzipBody: URL? = nil) throws -> BenchServer {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = ["--serve-loopback"] + (gzipBody.map { ["--gzip-body", $0.path] } ?? [])
        let input = Pipe()
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        var line = Data()
        while !line.contains(UInt8(ascii: "\n")) {
            let chunk = output.fileHandleForReading.availableData
            guard !chunk.isEmpty else { break }
            line.append(chunk)
        }
        let text = String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard text.hasPrefix("port="), let port = Int(text.dropFirst(5)),
            let url = URL(string: "http://127.0.0.1:\(port)")
        else {
            process.terminate()
            throw BenchFailure("the loopback server process did not report a port (it printed \"\(text)\")")
        }
        // An @unchecked box: `Process` and `Pipe` are not Sendable, but they are only touched once, by `stop()`,
        // which the Locked in BenchServer lets run at most once.
        let handles = UncheckedBox((process, input))
        let reason = "the loopback server has no HTTPS port (nginx and openssl are needed)"
        return BenchServer(baseURL: url, label: "loopback", tlsUnavailableReason: reason) {
            let (process, input) = handles.value
            try? input.fileHandleForWriting.close()
            process.waitUntilExit()
        }
    }
}

/// Hands a non-Sendable value to a closure that runs once; see the comment at each use.
struct UncheckedBox<Value>: @unchecked Sendable {
    let value: Value

    init(_ value: Value) {
        self.value = value
    }
}

/// Prints a progress or diagnostic line on standard error, keeping standard output for the table.
func log(_ message: String) {
    FileHandle.standardError.write(Data("networkagent-bench: \(message)\n".utf8))
}
