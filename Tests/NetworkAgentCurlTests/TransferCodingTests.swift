import Foundation
import NetworkAgent
import NetworkAgentCurl
import NetworkAgentTestServer
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A response whose `Transfer-Encoding` has a coding the client cannot decode (RFC 9112 §6.1): its framing and content
/// cannot be trusted, so the exchange fails with the same typed error on both transports (`transport`,
/// `URLError.cannotDecodeContentData`, not retried), where libcurl's own error differed between them.
@Suite struct TransferCodingTests {
    enum Transport: String, CaseIterable, CustomTestStringConvertible {
        case urlSession, curl
        var testDescription: String { rawValue }
        func make() -> any HTTPTransport {
            switch self {
            case .urlSession: URLSessionTransport()
            case .curl: CurlTransport()
            }
        }
    }

    /// The coding, and the body as the server frames it.
    static let codings: [(coding: String, body: String)] = [
        // Not chunked last: the body runs to the connection's close.
        ("foo", "hello"),
        ("foo, chunked", "5\r\nhello\r\n0\r\n\r\n"),
        // A coding libcurl knows, on bytes that are not in it.
        ("gzip, chunked", "5\r\nhello\r\n0\r\n\r\n"),
    ]

    @Test(arguments: Transport.allCases, 0..<codings.count)
    func anUndecodableTransferCodingFailsTheExchange(transport kind: Transport, coding index: Int) async throws {
        let (coding, body) = Self.codings[index]
        let server = try LoopbackServer { _ in
            // With Transfer-Encoding set the server sends the body bytes as they are.
            ServerResponse(
                headers: [("Transfer-Encoding", coding), ("Connection", "close")],
                body: .data(Data(body.utf8))
            )
        }
        let transport = kind.make()
        let error = await networkError { _ = try await transport.send(request(server, "/te")) }
        #expect(error?.code == .transport, "\(String(describing: error))")
        #expect(error?.urlErrorCode == .cannotDecodeContentData, "\(String(describing: error))")
        if kind == .curl {
            // libcurl's CURLE_BAD_CONTENT_ENCODING, and the coding named.
            #expect(error?.curlError?.curlCode == 61)
            #expect(
                error?.description.contains("Transfer-Encoding \"\(coding)\"") == true,
                "\(String(describing: error))"
            )
            await (transport as? CurlTransport)?.shutdown()
        }
    }

    @Test(arguments: Transport.allCases)
    func aStreamedCallFailsTheSameWay(transport kind: Transport) async throws {
        let server = try LoopbackServer { _ in
            ServerResponse(
                headers: [("Transfer-Encoding", "foo"), ("Connection", "close")],
                body: .data(Data("hello".utf8))
            )
        }
        let transport = kind.make()
        var headArrived = false
        let error = await networkError {
            let opened = try await transport.stream(request(server, "/te"))
            headArrived = true
            for try await _ in opened.body {}
        }
        #expect(headArrived, "the head is handed on; the body fails")
        #expect(error?.code == .transport, "\(String(describing: error))")
        #expect(error?.urlErrorCode == .cannotDecodeContentData, "\(String(describing: error))")
        await (transport as? CurlTransport)?.shutdown()
    }

    @Test(arguments: Transport.allCases)
    func chunkedAloneIsDecoded(transport kind: Transport) async throws {
        let server = try LoopbackServer { _ in
            ServerResponse(
                headers: [("Transfer-Encoding", "chunked")],
                body: .data(Data("5\r\nhello\r\n0\r\n\r\n".utf8))
            )
        }
        let transport = kind.make()
        let (data, _) = try await transport.send(request(server, "/chunked"))
        #expect(String(decoding: data, as: UTF8.self) == "hello")
        await (transport as? CurlTransport)?.shutdown()
    }
}
