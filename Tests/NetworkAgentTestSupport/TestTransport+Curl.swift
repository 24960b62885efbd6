import Foundation
import NetworkAgent
import NetworkAgentCurl

extension TestTransport {
    /// A `CurlTransport` with the settings the tests ask for and the defaults otherwise.
    static func makeCurl(
        maximumRedirects: Int,
        streamBufferLimit: Int?,
        maximumConnectionsPerHost: Int?
    ) -> any HTTPTransport {
        var configuration = CurlTransport.Configuration(maximumRedirects: maximumRedirects)
        if let streamBufferLimit { configuration.streamBufferLimit = streamBufferLimit }
        if let maximumConnectionsPerHost { configuration.maximumConnectionsPerHost = maximumConnectionsPerHost }
        return CurlTransport(configuration: configuration)
    }

    /// The transfers a `CurlTransport` has in flight; `nil` for another transport.
    static func curlActiveTransfers(of transport: any HTTPTransport) -> Int? {
        (transport as? CurlTransport)?.activeTransferCount
    }
}
