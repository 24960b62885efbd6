import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension URLResponse {
    /// The HTTP status, or `nil` for a response that is not HTTP.
    public var status: Int? { (self as? HTTPURLResponse)?.statusCode }
}
