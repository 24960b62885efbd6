import Foundation
import NetworkAgent
import NetworkAgentDiskCache
import NetworkAgentTestServer
import NetworkAgentTestSupport
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// On a plain miss the cache asks the transport to build its response with the status field on it; CurlTransport
/// does, so the cache hands that response on instead of building a second one. Whoever sets the field, the caller
/// gets the same response; a response without it (URLSessionTransport, an inner plugin's own) is annotated as before.
@Suite struct DiskCacheStatusFieldTests {
    /// A no-store answer with fields Foundation respells (lowercase names, `WWW-Authenticate`), merges (a repeated
    /// field) and reads (`Content-Type` with a charset, `Content-Length`).
    static func server() throws -> LoopbackServer {
        try LoopbackServer { request in
            if request.path == "/old" { return ServerResponse(status: 302, headers: [("Location", "/doc")]) }
            return ServerResponse(
                headers: [
                    ("Content-Type", "text/plain; charset=utf-8"),
                    ("cache-control", "no-store"),
                    ("www-authenticate", "Bearer realm=\"r\""),
                    ("x-trace", "a"),
                    ("X-Trace", "b"),
                    ("Content-MD5", "c"),
                ],
                body: .data(Data("document".utf8))
            )
        }
    }

    /// Each response the plugin after the cache got from the transport, and what the cache answered.
    final class Seen: Sendable {
        let inner = Locked<[HTTPURLResponse]>([])
        let outer = Locked<[HTTPURLResponse]>([])
    }

    /// Records what the cache answered (before the cache).
    struct Outer: NetworkAgentPlugin {
        let seen: Seen
        func intercept(
            _ request: URLRequest,
            endpoint: any NetworkAgentEndpoint,
            next: NetworkAgentExchange
        )
            async throws -> (data: Data, response: URLResponse)
        {
            let result = try await next(request)
            if let http = result.response as? HTTPURLResponse { seen.outer.withLock { $0.append(http) } }
            return result
        }
    }

    /// Records what the transport answered (after the cache); with `rebuild`, answers with a response of its own
    /// made from it without the status field, which is what the cache got from any transport before.
    struct Inner: NetworkAgentPlugin {
        let seen: Seen
        var rebuild = false
        var statusHeader: String? = DiskCachePlugin.defaultStatusHeader
        func intercept(
            _ request: URLRequest,
            endpoint: any NetworkAgentEndpoint,
            next: NetworkAgentExchange
        )
            async throws -> (data: Data, response: URLResponse)
        {
            let (data, response) = try await next(request)
            guard let http = response as? HTTPURLResponse, let url = http.url else { return (data, response) }
            seen.inner.withLock { $0.append(http) }
            guard rebuild else { return (data, response) }
            var fields: [String: String] = [:]
            for case (let name as String, let value as String) in http.allHeaderFields
            where name.lowercased() != statusHeader?.lowercased() {
                fields[name] = value
            }
            let own = HTTPURLResponse.withTransferTimings(
                http.transferTimings,
                url: url,
                statusCode: http.statusCode,
                httpVersion: "HTTP/1.1",
                headerFields: fields
            )
            return (data, own ?? response)
        }
    }

    static func fields(_ response: HTTPURLResponse) -> [String: String] {
        var fields: [String: String] = [:]
        for case (let name as String, let value as String) in response.allHeaderFields { fields[name] = value }
        return fields
    }

    /// The answer to one miss of `path` with the cache (and `inner` after it) on a transport of the tested kind.
    static func miss(
        _ server: LoopbackServer,
        path: String = "/doc",
        statusHeader: String? = DiskCachePlugin.defaultStatusHeader,
        rebuild: Bool,
        transport: any HTTPTransport
    ) async throws -> (answer: HTTPURLResponse, fromTransport: HTTPURLResponse) {
        let seen = Seen()
        let cache = DiskCachePlugin(store: MemoryStore(), configuration: .init(statusHeader: statusHeader))
        let provider = NetworkAgentProvider<CacheEndpoint>(
            plugins: [
                Outer(seen: seen), cache, Inner(seen: seen, rebuild: rebuild, statusHeader: statusHeader),
            ],
            agent: NetworkAgent(transport: transport)
        )
        let result = try await provider.request(endpoint: CacheEndpoint(baseURL: server.baseURL, path: path))
        #expect(String(decoding: result.data, as: UTF8.self) == "document")
        let answer = try #require(seen.outer.withLock { $0.first })
        let fromTransport = try #require(seen.inner.withLock { $0.first })
        return (answer, fromTransport)
    }

    @Test(arguments: ["/doc", "/old"], [DiskCachePlugin.defaultStatusHeader, "Cache-Status", "cdn-cache-status"])
    func aMissAnswersTheSameWhoeverSetsTheStatus(path: String, header: String) async throws {
        let server = try Self.server()
        defer { server.stop() }
        let transport = TestTransport.make()
        let fast = try await Self.miss(server, path: path, statusHeader: header, rebuild: false, transport: transport)
        let annotated = try await Self.miss(
            server,
            path: path,
            statusHeader: header,
            rebuild: true,
            transport: transport
        )
        for answer in [fast.answer, annotated.answer] {
            #expect(answer.value(forHTTPHeaderField: header) == "miss")
            #expect(answer.url?.path == "/doc")
        }
        #expect(Self.fields(fast.answer) == Self.fields(annotated.answer))
        #expect(fast.answer.statusCode == annotated.answer.statusCode)
        #expect(fast.answer.mimeType == annotated.answer.mimeType)
        #expect(fast.answer.textEncodingName == annotated.answer.textEncodingName)
        #expect(fast.answer.expectedContentLength == annotated.answer.expectedContentLength)
        #expect(fast.answer.suggestedFilename == annotated.answer.suggestedFilename)
        #expect(type(of: fast.answer) == type(of: annotated.answer))
        #expect((fast.answer.transferTimings == nil) == (annotated.answer.transferTimings == nil))
        #expect((fast.answer.transferTimings != nil) == (TestTransport.kind == .curl))
        // The cache rebuilt the response without the field; with it from the transport, it built nothing.
        #expect(annotated.answer !== annotated.fromTransport)
        let setByTransport = TestTransport.kind == .curl && fast.fromTransport.allHeaderFields[header] != nil
        #expect((fast.answer === fast.fromTransport) == setByTransport)
        if TestTransport.kind == .curl {
            // An `X-` name keeps its spelling in Foundation, so the cache finds the field it asked for; a name
            // Foundation respells is not found and the cache annotates as before.
            #expect(setByTransport == (header == DiskCachePlugin.defaultStatusHeader || header == "Cache-Status"))
        } else {
            #expect(fast.fromTransport.value(forHTTPHeaderField: header) == nil)
        }
    }

    @Test func aSideRequestOfAnInnerPluginGetsNoStatusField() async throws {
        let server = try Self.server()
        defer { server.stop() }
        struct Side: NetworkAgentPlugin {
            let side: Locked<HTTPURLResponse?>
            func intercept(
                _ request: URLRequest,
                endpoint: any NetworkAgentEndpoint,
                next: NetworkAgentExchange
            )
                async throws -> (data: Data, response: URLResponse)
            {
                var other = request
                other.url = request.url?.deletingLastPathComponent().appending(path: "side")
                let response = try await next.agent.send(other).response as? HTTPURLResponse
                side.withLock { $0 = response }
                return try await next(request)
            }
        }
        let side = Locked<HTTPURLResponse?>(nil)
        let provider = NetworkAgentProvider<CacheEndpoint>(
            plugins: [DiskCachePlugin(store: MemoryStore()), Side(side: side)],
            agent: NetworkAgent(transport: TestTransport.make())
        )
        let answer = try await provider.request(endpoint: CacheEndpoint(baseURL: server.baseURL, path: "/doc"))
        #expect(CacheStatus(response: try #require(answer.response as? HTTPURLResponse)) == .miss)
        let sideResponse = try #require(side.withLock { $0 })
        #expect(sideResponse.url?.path == "/side")
        #expect(sideResponse.value(forHTTPHeaderField: DiskCachePlugin.defaultStatusHeader) == nil)
        #expect(server.requests.map(\.path).sorted() == ["/doc", "/side"])
    }

    /// `CacheStatus(response:header:)` reads the field as Foundation's `value(forHTTPHeaderField:)` finds it, on a
    /// response carrying timings (as CurlTransport builds them, read without Foundation's look-up) and on a plain one:
    /// names in any case, fields Foundation respells or keeps, two spellings of one `X-` name, values that are no status.
    @Test func theStatusIsReadAsFoundationFindsIt() throws {
        let url = try #require(URL(string: "http://example.com/doc"))
        let heads: [[String: String]] = [
            ["X-NetworkAgent-Cache": "miss", "Content-Type": "text/plain", "ETag": "\"e\""],
            ["x-networkagent-cache": "hit", "cache-status": "stale"],
            ["X-NetworkAgent-Cache": "hit", "x-networkagent-cache": "stale"],
            ["X-NETWORKAGENT-CACHE": "revalidated", "Cache-Status": "HIT"],
            ["X-NetworkAgent-Cache": "", "cdn-cache-status": "miss"],
            ["\u{212A}eep-Alive": "x", "X-NetworkAgent-Cache": "stale"],
            ["Content-Length": "0"],
        ]
        let headers = [DiskCachePlugin.defaultStatusHeader, "x-networkagent-cache", "Cache-Status", "CDN-Cache-Status"]
        for head in heads {
            for timings in [HTTPTransferTimings(total: .milliseconds(1)), nil] {
                let response = try #require(
                    HTTPURLResponse.withTransferTimings(
                        timings,
                        url: url,
                        statusCode: 200,
                        httpVersion: "HTTP/1.1",
                        headerFields: head
                    )
                )
                for header in headers {
                    let expected = response.value(forHTTPHeaderField: header).flatMap(CacheStatus.init(rawValue:))
                    #expect(CacheStatus(response: response, header: header) == expected, "\(head) \(header)")
                }
                #expect(
                    CacheStatus(response: response)
                        == response.value(forHTTPHeaderField: "X-NetworkAgent-Cache").flatMap(CacheStatus.init)
                )
            }
        }
        let plain = URLResponse(url: url, mimeType: nil, expectedContentLength: 0, textEncodingName: nil)
        #expect(CacheStatus(response: plain) == nil)
    }
}
