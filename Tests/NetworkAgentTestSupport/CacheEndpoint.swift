import Foundation
import NetworkAgent

/// An endpoint on a loopback server, for the disk and Redis cache tests.
public struct CacheEndpoint: NetworkAgentEndpoint {
    /// The server.
    public var baseURL: URL
    /// The resource.
    public var path: String
    /// The method.
    public var method: HTTPMethod
    /// The header fields.
    public var headers: [String: String]
    /// The body.
    public var task: HTTPTask
    /// The deadline.
    public var timeout: Duration?

    /// Creates the endpoint.
    ///
    /// - Parameters:
    ///   - baseURL: The server.
    ///   - path: The resource.
    ///   - method: The method, `GET` by default.
    ///   - headers: The header fields, `Accept: text/plain` by default.
    ///   - task: The body, none by default.
    ///   - timeout: The deadline, 10 s by default.
    public init(
        baseURL: URL,
        path: String,
        method: HTTPMethod = .get,
        headers: [String: String] = ["Accept": "text/plain"],
        task: HTTPTask = .requestPlain,
        timeout: Duration? = .seconds(10)
    ) {
        self.baseURL = baseURL
        self.path = path
        self.method = method
        self.headers = headers
        self.task = task
        self.timeout = timeout
    }
}
