import Foundation
import NetworkAgent

/// An endpoint with nothing but a URL, a method and a body: no header fields, no deadline, and no adoption of any
/// plugin's endpoint protocol (such as `AuthorizableEndpoint`).
public struct PlainEndpoint: NetworkAgentEndpoint {
    /// The server.
    public var baseURL: URL
    /// The resource.
    public var path: String
    /// The method.
    public var method: HTTPMethod
    /// The body.
    public var task: HTTPTask

    /// Creates the endpoint.
    ///
    /// - Parameters:
    ///   - baseURL: The server.
    ///   - path: The resource, `/` by default.
    ///   - method: The method, `GET` by default.
    ///   - task: The body, none by default.
    public init(baseURL: URL, path: String = "/", method: HTTPMethod = .get, task: HTTPTask = .requestPlain) {
        self.baseURL = baseURL
        self.path = path
        self.method = method
        self.task = task
    }
}
