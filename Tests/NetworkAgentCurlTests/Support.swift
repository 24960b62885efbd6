import Foundation
import NetworkAgent
import NetworkAgentCurl
import NetworkAgentTestServer
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A request to `path` on `server`, with a deadline of 10 s unless said.
func request(
    _ server: LoopbackServer,
    _ path: String,
    method: String = "GET",
    body: Data? = nil,
    headers: [String: String] = [:],
    timeout: TimeInterval = 10
) -> URLRequest {
    var request = URLRequest(url: server.baseURL.appending(path: path))
    request.httpMethod = method
    request.httpBody = body
    request.timeoutInterval = timeout
    for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
    return request
}

extension CurlTransport {
    /// Sends `request` and returns the body as text and the HTTP response.
    func text(_ request: URLRequest) async throws -> (String, HTTPURLResponse) {
        let (data, response) = try await send(request)
        return (String(decoding: data, as: UTF8.self), try #require(response as? HTTPURLResponse))
    }
}

/// Runs `body` and returns the `NetworkAgentError` it throws (recording an issue when it throws none or another).
func networkError(_ body: () async throws -> Void) async -> NetworkAgentError? {
    do {
        try await body()
        Issue.record("expected a NetworkAgentError, got success")
        return nil
    } catch let error as NetworkAgentError {
        return error
    } catch {
        Issue.record("expected a NetworkAgentError, got \(error)")
        return nil
    }
}

/// A temporary file holding `data`, deleted by the caller.
func temporaryFile(_ data: Data) throws -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("curl-test-\(UUID().uuidString).bin")
    try data.write(to: url)
    return url
}

/// An endpoint on a loopback server, for provider-level tests.
struct CurlTestEndpoint: NetworkAgentEndpoint {
    var baseURL: URL
    var path = "/"
    var method = HTTPMethod.get
    var headers: [String: String] = ["Accept": "application/json"]
    var task = HTTPTask.requestPlain
    var timeout: Duration? = .seconds(10)
    var maximumResponseBytes: Int?
}

/// A thread-safe counter or box for test callbacks.
final class Box<Value: Sendable>: @unchecked Sendable {
    // @unchecked Sendable: `value` is only touched under `lock`.
    private let lock = NSLock()
    private var value: Value
    init(_ value: Value) { self.value = value }
    func update<Result>(_ body: (inout Value) -> Result) -> Result {
        lock.lock()
        defer { lock.unlock() }
        return body(&value)
    }
    var current: Value { update { $0 } }
}
