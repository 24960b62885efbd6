import Foundation
import NetworkAgent
import NetworkAgentCurl
import NetworkAgentTestServer
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What the agent reads from the transport: the response limit, progress, timings; a provider on CurlTransport.
@Suite struct CurlExchangeTests {
    @Test func aBodyOverTheLimitStopsTheTransfer() async throws {
        let piece = Data(repeating: 0x61, count: 8192)
        let server = try LoopbackServer { _ in ServerResponse(body: .chunked([piece, piece], interval: .seconds(3600)))
        }
        let agent = NetworkAgent(transport: CurlTransport(), configuration: .init(maximumResponseBytes: 4096))
        let error = await networkError { _ = try await agent.request(CurlTestEndpoint(baseURL: server.baseURL)) }
        #expect(error?.code == .responseTooLarge)
        #expect(error?.statusCode == 200)
        #expect(await eventually(within: .seconds(2)) { server.openConnectionCount == 0 })
    }

    @Test func aBodyOfExactlyTheLimitPasses() async throws {
        let body = Data(repeating: 0x61, count: 4096)
        let server = try LoopbackServer { _ in ServerResponse(body: .data(body)) }
        let agent = NetworkAgent(transport: CurlTransport(), configuration: .init(maximumResponseBytes: 4096))
        let (data, _) = try await agent.request(CurlTestEndpoint(baseURL: server.baseURL))
        #expect(data == body)
    }

    @Test func progressReportsUploadAndDownload() async throws {
        let download = Data(repeating: 7, count: 300_000)
        let server = try LoopbackServer { _ in ServerResponse(body: .data(download)) }
        let agent = NetworkAgent(transport: CurlTransport())
        let seen = Box<[TransferProgress]>([])
        let upload = Data(repeating: 1, count: 100_000)
        var endpoint = CurlTestEndpoint(baseURL: server.baseURL, method: .post)
        endpoint.task = .requestWithoutAttributes(content: upload)
        _ = try await agent.request(endpoint, progress: { progress in seen.update { $0.append(progress) } })
        let last = try #require(seen.current.last)
        #expect(last.bytesReceived == download.count)
        #expect(last.totalBytesExpectedToReceive == download.count)
        #expect(seen.current.contains { $0.bytesSent == upload.count && $0.totalBytesExpectedToSend == upload.count })
        // Monotonic, never past the total, in both directions, and never past the total the report announces.
        let reports = seen.current
        let received = reports.map(\.bytesReceived)
        #expect(received == received.sorted())
        #expect(received.allSatisfy { $0 <= download.count }, "received: \(received)")
        let sent = reports.map(\.bytesSent)
        #expect(sent == sent.sorted())
        #expect(sent.allSatisfy { $0 <= upload.count }, "sent: \(sent)")
        for report in reports {
            if let total = report.totalBytesExpectedToReceive { #expect(report.bytesReceived <= total, "\(report)") }
            if let total = report.totalBytesExpectedToSend { #expect(report.bytesSent <= total, "\(report)") }
        }
    }

    @Test func responsesCarryOrderedTimings() async throws {
        let server = try LoopbackServer { _ in ServerResponse(body: .data(Data(repeating: 1, count: 10_000))) }
        let transport = CurlTransport()
        let (_, response) = try await transport.send(request(server, "/t"))
        let timings = try #require(response.transferTimings)
        let total = try #require(timings.total)
        let firstByte = try #require(timings.firstByte)
        let preTransfer = try #require(timings.preTransfer)
        let connect = try #require(timings.connect)
        #expect(timings.tlsHandshake == nil)
        #expect(timings.nameLookup ?? .zero <= connect)
        #expect(connect <= preTransfer && preTransfer <= firstByte && firstByte <= total)
        // A streamed response has them up to the first byte, without the total.
        let opened = try await transport.stream(request(server, "/t"))
        #expect(opened.response.transferTimings?.firstByte != nil)
        #expect(opened.response.transferTimings?.total == nil)
    }

    @Test func aProviderWithPluginsRoundTripsOnCurlTransport() async throws {
        struct Tagging: NetworkAgentPlugin {
            func onRequest(_ request: URLRequest, endpoint: any NetworkAgentEndpoint) async throws -> URLRequest {
                var tagged = request
                tagged.setValue("yes", forHTTPHeaderField: "X-Tagged")
                return tagged
            }
        }
        let server = try LoopbackServer { request in
            .json(Data("{\"tagged\":\"\(request.header("X-Tagged") ?? "no")\"}".utf8))
        }
        let provider = NetworkAgentProvider<CurlTestEndpoint>(
            plugins: [Tagging(), ValidationPlugin()],
            agent: NetworkAgent(transport: CurlTransport())
        )
        struct Tag: Decodable { let tagged: String }
        let (data, response) = try await provider.request(endpoint: CurlTestEndpoint(baseURL: server.baseURL))
        #expect((response as? HTTPURLResponse)?.statusCode == 200)
        let tag = try JSONDecoder().decode(Tag.self, from: data)
        #expect(tag.tagged == "yes")
        #expect(server.requests.first?.header("User-Agent")?.hasPrefix("NetworkAgent/") == true)
    }
}
