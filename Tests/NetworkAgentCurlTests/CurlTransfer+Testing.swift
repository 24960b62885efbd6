import Foundation

@testable import NetworkAgentCurl

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension CurlTransfer {
    /// A GET of `url` without a body, timeout, deadline, limit or progress handler: the transfer the unit tests of
    /// the engine's parts (its waiting line, header parsing, error facts) start from.
    static func plainGET(_ url: URL) -> CurlTransfer {
        CurlTransfer(
            request: URLRequest(url: url),
            url: url,
            body: .none,
            timeoutMilliseconds: 0,
            headDeadline: nil,
            maximumResponseBytes: nil,
            progressHandler: nil
        )
    }
}
