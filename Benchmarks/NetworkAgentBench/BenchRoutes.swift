import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The routes both servers answer (Scripts/nginx/nginx.conf.template and ``LoopbackServeMode``).
enum BenchRoutes {
    /// The 1 KiB JSON document, never gzipped.
    static let plainDocument = "plain/data.json"
    /// The same document, never gzipped, with `Cache-Control: no-store`: a cache looks it up and never stores it.
    static let noStoreDocument = "nostore/data.json"
    /// The same document, never gzipped, with `Cache-Control: max-age=3600`: a cache stores it and answers it fresh.
    static let cacheableDocument = "cached/data.json"
    /// The document behind a bearer token: 401 unless the request has `Authorization: Bearer <validToken>`.
    static let protectedDocument = "protected/data.json"
    /// The one token the protected route accepts.
    static let validToken = "test-token"
    /// The `Cache-Control` of ``noStoreDocument``.
    static let noStoreCacheControl = "no-store"
    /// The `Cache-Control` of ``cacheableDocument``.
    static let cacheableCacheControl = "max-age=3600"
    /// Reads and discards a request body, then answers `{"received": <bytes>}`.
    static let upload = "upload"
    /// The `counted/` location of nginx: the plain document, each request logged with its connection's serial
    /// number and protocol (`h2_multiplex`).
    static let countedDocument = "counted/data.json"
    /// Where `gzip_bomb_curl`'s own loopback server answers its gzip body (`Content-Encoding: gzip`).
    static let gzipBomb = "bomb.json"
    /// The size of the document at ``plainDocument``.
    static let documentSize = 1_024

    /// A 1 KiB JSON document (1,024 bytes including the final newline), like the one Scripts/nginx/start writes.
    static let document: Data = {
        let head = #"{"id":1,"name":"networkagent","summary":"A 1 KiB JSON document served on loopback.","padding":""#
        let tail = #""}"# + "\n"
        let padding = String(repeating: "x", count: documentSize - head.utf8.count - tail.utf8.count)
        return Data((head + padding + tail).utf8)
    }()

    /// Checks that a response is the 1 KiB document with status 200.
    ///
    /// - Throws: ``BenchFailure`` otherwise.
    static func checkDocument(_ data: Data, _ response: URLResponse) throws(BenchFailure) {
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        guard status == 200, data.count == documentSize else {
            throw BenchFailure("expected the 1 KiB document with status 200, got status \(status), \(data.count) bytes")
        }
    }
}

/// A scenario that could not be measured, with the reason.
struct BenchFailure: Error, CustomStringConvertible {
    let description: String

    init(_ description: String) {
        self.description = description
    }
}
