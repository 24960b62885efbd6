import Foundation
import NetworkAgent

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A transport that answers every request with a fixed status, header fields and body on a response carrying
/// per-phase timings, as a libcurl transport does. It decodes nothing (like libcurl's), and streams use the
/// protocol's default (the whole body as one chunk), so a streamed response's head carries the same timings.
public struct TimedTransport: HTTPTransport {
    /// The timings every response carries; `nil` for none.
    public var timings: HTTPTransferTimings?
    /// The status of every response.
    public var statusCode: Int
    /// Header fields besides `Content-Length`, which is always the body's length.
    public var headers: [String: String]
    /// The body of every response.
    public var body: Data

    /// Creates the transport.
    ///
    /// - Parameters:
    ///   - timings: The timings every response carries.
    ///   - statusCode: The status, 200 by default.
    ///   - headers: Header fields besides `Content-Length`.
    ///   - body: The body, `hello` by default.
    public init(
        timings: HTTPTransferTimings?,
        statusCode: Int = 200,
        headers: [String: String] = [:],
        body: Data = Data("hello".utf8)
    ) {
        self.timings = timings
        self.statusCode = statusCode
        self.headers = headers
        self.body = body
    }

    /// Answers with the fixed response.
    public func send(_ request: URLRequest) async throws -> (data: Data, response: URLResponse) {
        guard let url = request.url,
            let response = HTTPURLResponse.withTransferTimings(
                timings,
                url: url,
                statusCode: statusCode,
                httpVersion: "HTTP/2",
                headerFields: headers.merging(["Content-Length": "\(body.count)"]) { $1 }
            )
        else { throw NetworkAgentError(.invalidResponse, "no URL") }
        return (body, response)
    }
}
