import Foundation
import NetworkAgent

/// The endpoints the scenarios call, as plain values (the server's port is only known at run time).
struct BenchEndpoint: NetworkAgentEndpoint {
    let baseURL: URL
    let path: String
    let method: HTTPMethod
    let headers: [String: String]
    let task: HTTPTask
    let timeout: Duration?

    /// A `GET` of `path` on `baseURL`, accepting JSON.
    static func get(_ baseURL: URL, path: String) -> BenchEndpoint {
        BenchEndpoint(
            baseURL: baseURL,
            path: path,
            method: .get,
            headers: ["Accept": "application/json"],
            task: .requestPlain,
            timeout: nil
        )
    }

    /// A `GET` of `path` on `baseURL` with a query, accepting JSON.
    static func get(_ baseURL: URL, path: String, query: [String: String]) -> BenchEndpoint {
        BenchEndpoint(
            baseURL: baseURL,
            path: path,
            method: .get,
            headers: ["Accept": "application/json"],
            task: .requestAttributes(attributes: query, encoding: .url),
            timeout: nil
        )
    }

    /// A multipart `POST` of one file part to `url`, with a deadline long enough for a gigabyte on a busy machine.
    static func upload(_ url: URL, file: URL) -> BenchEndpoint {
        BenchEndpoint(
            baseURL: url,
            path: "",
            method: .post,
            headers: ["Accept": "application/json", "Content-Type": "multipart/form-data"],
            task: .upload(parts: [HTTPMultipartTask(fileURL: file, name: "file")]),
            timeout: .seconds(600)
        )
    }
}
