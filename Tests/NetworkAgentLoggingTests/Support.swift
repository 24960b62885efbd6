import Foundation
import NetworkAgent
import NetworkAgentLogging

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// An endpoint whose every part a test can set.
struct TestEndpoint: NetworkAgentEndpoint {
    var baseURL: URL
    var path = "/"
    var method = HTTPMethod.get
    var headers: [String: String] = ["Accept": "application/json"]
    var task = HTTPTask.requestPlain
    var timeout: Duration?
}

/// A sink that keeps every record, for assertions.
final class RecordCollector: Sendable {
    private let storage = Locked<[LogRecord]>([])

    var sink: LogSink {
        LogSink { record in self.storage.withLock { $0.append(record) } }
    }

    var records: [LogRecord] { storage.withLock { $0 } }

    func records(_ kind: LogRecord.Kind) -> [LogRecord] {
        records.filter { $0.kind == kind }
    }

    /// The one record of a kind, or `nil` when there are none or several.
    func only(_ kind: LogRecord.Kind) -> LogRecord? {
        let matching = records(kind)
        return matching.count == 1 ? matching[0] : nil
    }

    /// Every message joined, for "no secret anywhere" checks.
    var allText: String {
        records.map { $0.message + " " + $0.metadata.values.sorted().joined(separator: " ") }.joined(separator: "\n")
    }
}

/// Answers without the network, like a cache, emitting `cache.hit`.
struct CannedAnswer: NetworkAgentPlugin {
    func intercept(
        _ request: URLRequest,
        endpoint: any NetworkAgentEndpoint,
        next: NetworkAgentExchange
    ) async throws -> (data: Data, response: URLResponse) {
        NetworkAgentEvents.emit(NetworkAgentEvent(.cacheHit, attributes: ["age_s": "3"]))
        guard let url = request.url,
            let response = HTTPURLResponse(url: url, statusCode: 200, httpVersion: "HTTP/1.1", headerFields: [:])
        else { throw NetworkAgentError(.invalidResponse, "no URL") }
        return (Data("cached".utf8), response)
    }
}

extension String {
    /// The text with every `(<digits>.<digit> ms` replaced by `(T ms`, for comparing messages.
    var normalizingDurations: String {
        replacingOccurrences(of: #"\(\d+\.\d ms"#, with: "(T ms", options: .regularExpression)
    }
}
