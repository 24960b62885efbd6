import Foundation
import NetworkAgentDiskCache

/// Entries for store tests: a URL path, a body and fixed times.
enum EntryFactory {
    static func key(_ path: String, method: String = "GET") -> CacheKey {
        CacheKey(method: method, url: "http://store.test\(path)", credential: "", varyNames: [], variant: "")
    }

    static func entry(_ path: String, body: Data = Data("body".utf8), headers: [String: String] = [:]) -> CachedEntry {
        CachedEntry(
            key: key(path),
            responseURL: URL(string: "http://store.test\(path)") ?? URL(fileURLWithPath: "/"),
            statusCode: 200,
            headers: ["Cache-Control": "max-age=60"].merging(headers) { $1 },
            body: body,
            requestDate: Date(timeIntervalSince1970: 1_700_000_000.25),
            responseDate: Date(timeIntervalSince1970: 1_700_000_000.5)
        )
    }
}
