import Foundation
import NetworkAgent

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A transport that answers every request with a fixed status and body on a response carrying per-phase timings, as
/// a libcurl transport does. Streams use the protocol's default (the whole body as one chunk), so a streamed
/// response's head carries the same timings.
struct TimedTransport: HTTPTransport {
    var timings: HTTPTransferTimings?
    var statusCode = 200
    var body = Data("hello".utf8)

    func send(_ request: URLRequest) async throws -> (data: Data, response: URLResponse) {
        guard let url = request.url,
            let response = HTTPURLResponse.withTransferTimings(
                timings,
                url: url,
                statusCode: statusCode,
                httpVersion: "HTTP/2",
                headerFields: ["Content-Length": "\(body.count)"]
            )
        else { throw NetworkAgentError(.invalidResponse, "no URL") }
        return (body, response)
    }
}

extension HTTPTransferTimings {
    /// A new TLS connection: lookup 2 ms, connect +3 ms, handshake +10 ms, pre-transfer +0.2 ms, first byte +40 ms,
    /// body +5 ms.
    static let newTLSConnection = HTTPTransferTimings(
        nameLookup: .milliseconds(2),
        connect: .milliseconds(5),
        tlsHandshake: .milliseconds(15),
        preTransfer: .microseconds(15_200),
        firstByte: .microseconds(55_200),
        total: .microseconds(60_200)
    )

    /// A reused connection as libcurl reports it: lookup, connect and handshake zero.
    static let reusedConnection = HTTPTransferTimings(
        nameLookup: .zero,
        connect: .zero,
        tlsHandshake: .zero,
        preTransfer: .microseconds(50),
        firstByte: .microseconds(3_050),
        total: .microseconds(3_100)
    )
}
