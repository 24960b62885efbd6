import Foundation
import NetworkAgentDiskCache

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One answer of a cache test: body text, response and cache status.
public struct CacheAnswer {
    /// The body, as UTF-8.
    public let body: String
    /// The response.
    public let response: HTTPURLResponse

    /// Creates an answer.
    ///
    /// - Parameters:
    ///   - body: The body, as UTF-8.
    ///   - response: The response.
    public init(body: String, response: HTTPURLResponse) {
        self.body = body
        self.response = response
    }

    /// The status the cache put on the response.
    public var status: CacheStatus? { CacheStatus(response: response) }

    /// A header field of the response.
    ///
    /// - Parameter name: The field's name.
    /// - Returns: Its value, or `nil`.
    public func header(_ name: String) -> String? { response.value(forHTTPHeaderField: name) }
}
