import Foundation
import NetworkAgent

extension TestTransport {
    /// Placeholder until `NetworkAgentCurl` is part of the package: a curl run stops at once, loudly.
    static func makeCurl(
        maximumRedirects: Int,
        streamBufferLimit: Int?,
        maximumConnectionsPerHost: Int?
    ) -> any HTTPTransport {
        fatalError("\(environmentVariable)=curl: this build has no NetworkAgentCurl")
    }

    /// Placeholder until `NetworkAgentCurl` is part of the package.
    static func curlActiveTransfers(of transport: any HTTPTransport) -> Int? { nil }
}
