import Foundation
import NetworkAgent
import NetworkAgentTestServer

/// The hidden `--serve-loopback` mode: the loopback test server in a process of its own, answering the same routes
/// as Scripts/nginx/nginx.conf.template, so the bench process measures only the client.
enum LoopbackServeMode {
    /// Serves until standard input closes; prints `port=<port>` first.
    ///
    /// - Parameter gzipBody: A file to serve at ``BenchRoutes/gzipBomb`` with `Content-Encoding: gzip`, read once
    ///   now (`gzip_bomb_curl`'s body, about 1 MiB).
    /// - Returns: The exit status.
    static func run(gzipBody: URL? = nil) -> Int32 {
        let gzip: Data?
        do {
            gzip = try gzipBody.map { try Data(contentsOf: $0) }
        } catch {
            log("the loopback server cannot read its gzip body: \(error)")
            return 1
        }
        // Holds the server for its own handler, which forgets each recorded request (bodies included) as soon as
        // it arrives: the benchmarks send gigabytes and hundreds of thousands of requests.
        let holder = Locked<LoopbackServer?>(nil)
        let document = BenchRoutes.document
        let server: LoopbackServer
        do {
            server = try LoopbackServer { request in
                holder.withLock { $0?.resetRecording() }
                if let gzip, request.method == "GET", request.path == "/" + BenchRoutes.gzipBomb {
                    return .json(gzip, headers: [("Content-Encoding", "gzip")])
                }
                return respond(to: request, document: document)
            }
        } catch {
            log("the loopback server did not start: \(error)")
            return 1
        }
        holder.withLock { $0 = server }
        FileHandle.standardOutput.write(Data("port=\(server.port)\n".utf8))
        _ = FileHandle.standardInput.readDataToEndOfFile()
        holder.withLock { $0 = nil }
        server.stop()
        return 0
    }

    private static func respond(to request: ServerRequest, document: Data) -> ServerResponse {
        switch (request.method, request.path) {
        case ("GET", "/data.json"), ("GET", "/" + BenchRoutes.plainDocument):
            return .json(document)
        case ("GET", "/" + BenchRoutes.noStoreDocument):
            return .json(document, headers: [("Cache-Control", BenchRoutes.noStoreCacheControl)])
        case ("GET", "/" + BenchRoutes.cacheableDocument):
            return .json(document, headers: [("Cache-Control", BenchRoutes.cacheableCacheControl)])
        case ("GET", "/" + BenchRoutes.protectedDocument):
            guard request.header("Authorization") == "Bearer \(BenchRoutes.validToken)" else {
                return .text("", status: 401)
            }
            return .json(document)
        case ("POST", "/" + BenchRoutes.upload):
            return .json(Data(#"{"received": \#(request.body.count)}"#.utf8))
        default:
            return .text("not found", status: 404)
        }
    }
}
