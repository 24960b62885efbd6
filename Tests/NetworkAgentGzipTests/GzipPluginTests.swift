import Foundation
import NetworkAgent
import NetworkAgentGzip
import NetworkAgentTestServer
import NetworkAgentTestSupport
import NetworkAgentTesting
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// An endpoint whose every part a test sets.
struct GzipEndpoint: NetworkAgentEndpoint {
    var baseURL: URL
    var path = "/"
    var method = HTTPMethod.post
    var headers: [String: String] = ["Content-Type": "application/json"]
    var task = HTTPTask.requestPlain
}

/// Sets a file-backed body, as an app streaming a large JSON document from disk would.
struct FileBody: NetworkAgentPlugin {
    let fileURL: URL

    func onRequest(_ request: URLRequest, endpoint: any NetworkAgentEndpoint) async throws -> URLRequest {
        var request = request
        request.httpBodyStream = FileBackedBodyStream(fileURL: fileURL)
        return request
    }
}

@Suite("Gzip plugin")
struct GzipPluginTests {
    // MARK: - Request compression over the wire

    /// Inflates gzip request bodies with the Inflater and echoes what it got; `X-Received-Encoding` tells how the
    /// body arrived and `X-Received-Length` how many bytes came over the wire.
    static func decodingEchoServer() throws -> LoopbackServer {
        try LoopbackServer { request in
            var headers = [
                ("Content-Type", "application/octet-stream"),
                ("X-Received-Encoding", request.header("Content-Encoding") ?? "none"),
                ("X-Received-Length", "\(request.body.count)"),
                ("X-Received-Chunked", "\(request.isChunked)"),
            ]
            if let length = request.header("Content-Length") {
                headers.append(("X-Received-Content-Length", length))
            }
            guard request.header("Content-Encoding") == "gzip" else {
                return ServerResponse(headers: headers, body: .data(request.body))
            }
            do {
                let body = try Inflater.decompress(request.body, format: .gzip)
                return ServerResponse(headers: headers, body: .data(body))
            } catch {
                return .text("cannot inflate: \(error)", status: 400)
            }
        }
    }

    static func send(
        _ body: Data,
        headers: [String: String],
        to server: LoopbackServer,
        plugin: GzipPlugin = .gzip()
    ) async throws -> (data: Data, response: HTTPURLResponse) {
        let provider = NetworkAgentProvider<GzipEndpoint>(plugins: [plugin], agent: TestTransport.agent())
        let endpoint = GzipEndpoint(
            baseURL: server.baseURL,
            headers: headers,
            task: .requestWithoutAttributes(content: body)
        )
        let (data, response) = try await provider.request(endpoint: endpoint)
        return (data, try #require(response as? HTTPURLResponse))
    }

    @Test(
        "a compressible body arrives intact after the server inflates it",
        arguments: [
            "application/json", "application/json; charset=utf-8", "application/problem+json", "text/csv",
            "application/xml", "application/atom+xml", "application/x-www-form-urlencoded", "application/x-ndjson",
            "application/javascript",
        ]
    )
    func compressedBodyArrivesIntact(contentType: String) async throws {
        let server = try Self.decodingEchoServer()
        defer { server.stop() }
        let original = Sample.json(count: 200_000)
        let events = EventRecorder()
        let (data, response) = try await events.observing {
            try await Self.send(original, headers: ["Content-Type": contentType], to: server)
        }
        #expect(response.statusCode == 200)
        #expect(data == original)
        #expect(response.value(forHTTPHeaderField: "X-Received-Encoding") == "gzip")
        let wireLength = try #require(response.value(forHTTPHeaderField: "X-Received-Length").flatMap { Int($0) })
        #expect(wireLength < original.count / 2)
        // The transport framed the compressed body with its own, correct length.
        #expect(response.value(forHTTPHeaderField: "X-Received-Content-Length") == "\(wireLength)")
        let compressed = events.events(from: "gzip", named: "request_compressed")
        #expect(compressed.count == 1)
        #expect(compressed.first?.attributes["bytes_before"] == "\(original.count)")
        #expect(compressed.first?.attributes["bytes_after"] == "\(wireLength)")
        #expect(compressed.first?.attributes["body"] == "data")
    }

    @Test("bodies below the threshold go out untouched; from the threshold on they are compressed")
    func threshold() async throws {
        let server = try Self.decodingEchoServer()
        defer { server.stop() }
        let size = GzipPlugin.defaultMinimumBodySize
        let below = Sample.json(count: size - 1)
        let (smallEcho, small) = try await Self.send(below, headers: ["Content-Type": "application/json"], to: server)
        #expect(small.value(forHTTPHeaderField: "X-Received-Encoding") == "none")
        #expect(smallEcho == below)

        let atThreshold = Sample.json(count: size)
        let (echo, compressed) = try await Self.send(
            atThreshold,
            headers: ["Content-Type": "application/json"],
            to: server
        )
        #expect(compressed.value(forHTTPHeaderField: "X-Received-Encoding") == "gzip")
        #expect(echo == atThreshold)

        let (customEcho, custom) = try await Self.send(
            Sample.json(count: 10_000),
            headers: ["Content-Type": "application/json"],
            to: server,
            plugin: .gzip(minimumBodySize: 20_000)
        )
        #expect(custom.value(forHTTPHeaderField: "X-Received-Encoding") == "none")
        #expect(customEcho.count == 10_000)
    }

    @Test(
        "incompressible content types go out untouched",
        arguments: ["image/png", "application/octet-stream", "multipart/form-data; boundary=x", "application/zip"]
    )
    func incompressibleTypes(contentType: String) async throws {
        let server = try Self.decodingEchoServer()
        defer { server.stop() }
        let original = Sample.json(count: 50_000)
        let (data, response) = try await Self.send(original, headers: ["Content-Type": contentType], to: server)
        #expect(response.value(forHTTPHeaderField: "X-Received-Encoding") == "none")
        #expect(response.value(forHTTPHeaderField: "X-Received-Length") == "\(original.count)")
        #expect(data == original)
    }

    @Test("a body that already has a Content-Encoding goes out untouched")
    func alreadyEncoded() async throws {
        let server = try Self.decodingEchoServer()
        defer { server.stop() }
        let original = Sample.json(count: 50_000)
        let (data, response) = try await Self.send(
            original,
            headers: ["Content-Type": "application/json", "Content-Encoding": "identity"],
            to: server
        )
        #expect(response.value(forHTTPHeaderField: "X-Received-Encoding") == "identity")
        #expect(data == original)
    }

    @Test("a body that gzip would not shrink goes out untouched")
    func notSmaller() async throws {
        let server = try Self.decodingEchoServer()
        defer { server.stop() }
        // Already-compressed bytes labelled as JSON: gzip only adds its header and trailer.
        let incompressible = try Deflater.compress(Sample.json(count: 300_000), format: .raw, level: 9)
        let events = EventRecorder()
        let (data, response) = try await events.observing {
            try await Self.send(incompressible, headers: ["Content-Type": "application/json"], to: server)
        }
        #expect(response.value(forHTTPHeaderField: "X-Received-Encoding") == "none")
        #expect(data == incompressible)
        #expect(
            events.events(from: "gzip", named: "request_not_compressed").first?.attributes["reason"] == "not_smaller"
        )
        #expect(events.events(from: "gzip", named: "request_compressed").isEmpty)
    }

    @Test("a file-backed JSON body is compressed as a stream into a temporary file that is deleted afterwards")
    func fileBackedBody() async throws {
        let server = try Self.decodingEchoServer()
        defer { server.stop() }
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("gzip-plugin-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let original = Sample.json(count: 3_000_000)
        let source = FileManager.default.temporaryDirectory.appendingPathComponent("gzip-source-\(UUID()).json")
        try original.write(to: source)
        defer { try? FileManager.default.removeItem(at: source) }

        let provider = NetworkAgentProvider<GzipEndpoint>(
            plugins: [
                FileBody(fileURL: source), .gzip(temporaryDirectory: directory),
            ],
            agent: TestTransport.agent()
        )
        let events = EventRecorder()
        let (data, response) = try await events.observing {
            try await provider.request(endpoint: GzipEndpoint(baseURL: server.baseURL))
        }
        let http = try #require(response as? HTTPURLResponse)
        #expect(http.statusCode == 200)
        #expect(data == original)
        #expect(http.value(forHTTPHeaderField: "X-Received-Encoding") == "gzip")
        // Uploaded from the compressed file with its length, not as a chunked stream.
        #expect(http.value(forHTTPHeaderField: "X-Received-Chunked") == "false")
        let wireLength = try #require(http.value(forHTTPHeaderField: "X-Received-Length").flatMap { Int($0) })
        #expect(http.value(forHTTPHeaderField: "X-Received-Content-Length") == "\(wireLength)")
        let compressed = try #require(events.events(from: "gzip", named: "request_compressed").first)
        #expect(
            compressed.attributes == [
                "bytes_before": "\(original.count)", "bytes_after": "\(wireLength)", "body": "file",
            ]
        )
        // The compressed copy is gone with the request; the caller's own file is kept.
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty)
        #expect(FileManager.default.fileExists(atPath: source.path))
    }

    @Test("a file-backed body is replaced by a compressed temporary file that deletes itself")
    func fileBackedBodyReplaced() async throws {
        let original = Sample.json(count: 5 * 256 * 1024 + 17)
        let source = FileManager.default.temporaryDirectory.appendingPathComponent("gzip-replace-\(UUID()).json")
        try original.write(to: source)
        defer { try? FileManager.default.removeItem(at: source) }
        var request = URLRequest(url: URL(string: "http://stub.test")!)
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.setValue("\(original.count)", forHTTPHeaderField: "Content-Length")
        request.httpBodyStream = FileBackedBodyStream(fileURL: source)
        var compressedFile: URL?
        do {
            let sent = try await GzipPlugin().onRequest(
                request,
                endpoint: GzipEndpoint(baseURL: URL(string: "http://stub.test")!)
            )
            let stream = try #require(sent.httpBodyStream as? FileBackedBodyStream)
            compressedFile = stream.fileURL
            #expect(stream.deletesFileOnDeinit)
            #expect(stream.fileURL != source)
            #expect(sent.value(forHTTPHeaderField: "Content-Encoding") == "gzip")
            #expect(sent.value(forHTTPHeaderField: "Content-Length") == nil)
            #expect(try Inflater.decompress(Data(contentsOf: stream.fileURL), format: .gzip) == original)
        }
        let file = try #require(compressedFile)
        #expect(!FileManager.default.fileExists(atPath: file.path))
    }

    @Test("a stale Content-Length is removed from a compressed request")
    func staleContentLengthRemoved() async throws {
        let stub = StubTransport(fallback: .status(204))
        let provider = NetworkAgentProvider<GzipEndpoint>(plugins: [.gzip()], agent: NetworkAgent(transport: stub))
        let body = Sample.json(count: 10_000)
        _ = try await provider.request(
            endpoint: GzipEndpoint(
                baseURL: URL(string: "http://stub.test")!,
                headers: ["Content-Type": "application/json", "Content-Length": "\(body.count)"],
                task: .requestWithoutAttributes(content: body)
            )
        )
        let sent = try #require(stub.requests.first)
        #expect(sent.value(forHTTPHeaderField: "Content-Encoding") == "gzip")
        #expect(sent.value(forHTTPHeaderField: "Content-Length") == nil)
        #expect(try Inflater.decompress(sent.httpBody ?? Data(), format: .gzip) == body)
    }

    @Test("request compression can be turned off")
    func compressionDisabled() async throws {
        let stub = StubTransport(fallback: .status(204))
        let provider = NetworkAgentProvider<GzipEndpoint>(
            plugins: [.gzip(compressesRequests: false)],
            agent: NetworkAgent(transport: stub)
        )
        let body = Sample.json(count: 10_000)
        _ = try await provider.request(
            endpoint: GzipEndpoint(
                baseURL: URL(string: "http://stub.test")!,
                task: .requestWithoutAttributes(content: body)
            )
        )
        let sent = try #require(stub.requests.first)
        #expect(sent.value(forHTTPHeaderField: "Content-Encoding") == nil)
        #expect(sent.httpBody == body)
    }

    @Test("the level is clamped to 0...9 and the size threshold to non-negative values")
    func clamping() {
        #expect(GzipPlugin(level: 42).level == 9)
        #expect(GzipPlugin(level: -1).level == 0)
        #expect(GzipPlugin(minimumBodySize: -5).minimumBodySize == 0)
        #expect(GzipPlugin().level == GzipPlugin.defaultLevel)
    }

    @Test(
        "compressible content types",
        arguments: [
            ("application/json", true), ("Application/JSON; charset=UTF-8", true), ("text/plain", true),
            ("text/html;charset=utf-8", true), ("application/vnd.api+json", true), ("image/svg+xml", true),
            ("application/xml", true), ("application/x-www-form-urlencoded", true), ("application/x-ndjson", true),
            ("application/javascript", true), ("application/octet-stream", false), ("image/jpeg", false),
            ("multipart/form-data; boundary=abc", false), ("application/gzip", false), ("", false),
            ("application/jsonx", false),
        ]
    )
    func compressibleContentTypes(contentType: String, expected: Bool) {
        #expect(GzipPlugin.isCompressible(contentType: contentType) == expected)
    }

    // MARK: - Response decoding with a transport that does not decode

    static func stubbedResponse(
        body: Data,
        headers: [String: String],
        plugin: GzipPlugin = .gzip()
    ) async throws -> (data: Data, response: HTTPURLResponse, stub: StubTransport) {
        let stub = StubTransport(fallback: StubTransport.Response(headers: headers, body: body))
        let provider = NetworkAgentProvider<GzipEndpoint>(plugins: [plugin], agent: NetworkAgent(transport: stub))
        let (data, response) = try await provider.request(
            endpoint: GzipEndpoint(baseURL: URL(string: "http://stub.test")!, method: .get)
        )
        return (data, try #require(response as? HTTPURLResponse), stub)
    }

    @Test(
        "compressed bodies from a stub transport are inflated and the headers fixed",
        arguments: [
            ("gzip", Deflater.Format.gzip), ("x-gzip", .gzip), ("GZIP", .gzip), ("deflate", .zlib),
            ("deflate", .raw),
        ]
    )
    func stubInflates(encoding: String, format: Deflater.Format) async throws {
        let original = Sample.json(count: 120_000)
        let compressed = try Deflater.compress(original, format: format)
        let events = EventRecorder()
        let (data, response, _) = try await events.observing {
            try await Self.stubbedResponse(
                body: compressed,
                headers: [
                    "Content-Type": "application/json", "Content-Encoding": encoding,
                    "Content-Length": "\(compressed.count)", "ETag": "\"v1\"",
                ]
            )
        }
        #expect(data == original)
        #expect(response.value(forHTTPHeaderField: "Content-Encoding") == nil)
        #expect(response.value(forHTTPHeaderField: "Content-Length") == "\(original.count)")
        #expect(response.value(forHTTPHeaderField: "Content-Type") == "application/json")
        #expect(response.value(forHTTPHeaderField: "ETag") == "\"v1\"")
        #expect(response.statusCode == 200)
        let inflated = try #require(events.events(from: "gzip", named: "response_inflated").first)
        #expect(inflated.attributes["bytes_before"] == "\(compressed.count)")
        #expect(inflated.attributes["bytes_after"] == "\(original.count)")
        #expect(inflated.attributes["format"] == "\(format.inflateFormat)")
    }

    @Test("a chunked response without Content-Length gets none after inflating")
    func noContentLengthStaysAbsent() async throws {
        let original = Sample.json(count: 5_000)
        let (data, response, _) = try await Self.stubbedResponse(
            body: try Deflater.compress(original),
            headers: ["Content-Encoding": "gzip"]
        )
        #expect(data == original)
        #expect(response.value(forHTTPHeaderField: "Content-Length") == nil)
        #expect(response.value(forHTTPHeaderField: "Content-Encoding") == nil)
    }

    @Test(
        "a plain body with a stale Content-Encoding is passed through with fixed headers",
        arguments: ["gzip", "deflate"]
    )
    func stalePlainBody(encoding: String) async throws {
        let plain = Sample.json(count: 10_000)
        let events = EventRecorder()
        let (data, response, _) = try await events.observing {
            try await Self.stubbedResponse(
                body: plain,
                headers: ["Content-Encoding": encoding, "Content-Length": "1234"]
            )
        }
        #expect(data == plain)
        #expect(response.value(forHTTPHeaderField: "Content-Encoding") == nil)
        #expect(response.value(forHTTPHeaderField: "Content-Length") == "\(plain.count)")
        #expect(
            events.events(from: "gzip", named: "response_headers_normalized").first?.attributes["encoding"] == encoding
        )
        #expect(events.events(from: "gzip", named: "response_inflated").isEmpty)
    }

    /// The answers whose body the plugin sees empty although their headers describe a compressed representation.
    enum EmptyBody: String, CaseIterable, CustomTestStringConvertible {
        case head, noContent, notModified, streamed2xx
        var testDescription: String { rawValue }
    }

    @Test(
        "an empty body is passed through untouched (HEAD, 204, 304, a streamed 2xx)",
        arguments: EmptyBody.allCases
    )
    func emptyBodyUntouched(_ kind: EmptyBody) async throws {
        // The headers describe a gzip representation of 4321 bytes that this answer does not carry.
        let headers = ["Content-Type": "application/json", "Content-Encoding": "gzip", "Content-Length": "4321"]
        let compressed = try Deflater.compress(Sample.json(count: 20_000))
        let status: Int
        let method: HTTPMethod
        switch kind {
        case .head: (status, method) = (200, .head)
        case .noContent: (status, method) = (204, .get)
        case .notModified: (status, method) = (304, .get)
        case .streamed2xx: (status, method) = (200, .get)
        }
        // A HEAD, 204 or 304 comes without a body; a streamed 2xx has one, which goes to the caller past the chain.
        let body = kind == .streamed2xx ? compressed : Data()
        let stub = StubTransport(fallback: StubTransport.Response(statusCode: status, headers: headers, body: body))
        let events = EventRecorder()
        let provider = NetworkAgentProvider<GzipEndpoint>(plugins: [.gzip()], agent: NetworkAgent(transport: stub))
        let endpoint = GzipEndpoint(baseURL: URL(string: "http://stub.test")!, method: method)
        let (data, response): (Data, HTTPURLResponse) = try await events.observing {
            if kind == .streamed2xx {
                let stream = try await provider.stream(endpoint: endpoint)
                var received = Data()
                for try await chunk in stream.body { received.append(chunk) }
                return (received, stream.response)
            }
            let (data, response) = try await provider.request(endpoint: endpoint)
            return (data, try #require(response as? HTTPURLResponse))
        }
        #expect(stub.requests.map(\.httpMethod) == [method.name])
        #expect(response.statusCode == status)
        #expect(data == body)
        #expect(response.value(forHTTPHeaderField: "Content-Encoding") == "gzip")
        #expect(response.value(forHTTPHeaderField: "Content-Length") == "4321")
        #expect(events.events.filter { $0.source == "gzip" }.isEmpty, "\(events.events)")
    }

    @Test(
        "other codings, stacked codings and identity are left alone",
        arguments: ["br", "zstd", "gzip, br", "identity"]
    )
    func otherCodingsUntouched(encoding: String) async throws {
        let body = try Deflater.compress(Sample.json(count: 5_000))
        let (data, response, _) = try await Self.stubbedResponse(body: body, headers: ["Content-Encoding": encoding])
        #expect(data == body)
        #expect(response.value(forHTTPHeaderField: "Content-Encoding") == encoding)
    }

    enum Damage: String, CaseIterable, CustomTestStringConvertible {
        case flippedMiddleByte, truncated, flippedTrailer, garbageAfterHeader
        var testDescription: String { rawValue }
    }

    @Test(
        "a corrupt compressed body fails with invalidResponse wrapping the GzipPlugin.Error",
        arguments: Damage.allCases
    )
    func corruptBody(damage: Damage) async throws {
        var body = try Deflater.compress(Sample.json(count: 100_000))
        let expected: Set<GzipPlugin.Error.Code>
        switch damage {
        case .flippedMiddleByte:
            body[body.count / 2] ^= 0xff
            expected = [.corruptData, .checksumMismatch]
        case .truncated:
            body = body.prefix(body.count - 100)
            expected = [.truncatedInput]
        case .flippedTrailer:
            body[body.count - 1] ^= 0x01
            expected = [.checksumMismatch]
        case .garbageAfterHeader:
            body = body.prefix(10) + Data(repeating: 0xff, count: 64)
            expected = [.corruptData]
        }
        let received = body
        let events = EventRecorder()
        let error = await #expect(throws: NetworkAgentError.self) {
            _ = try await events.observing {
                try await Self.stubbedResponse(body: received, headers: ["Content-Encoding": "gzip"])
            }
        }
        #expect(error?.code == .invalidResponse)
        let gzipError = try #require(error?.underlying as? GzipPlugin.Error)
        #expect(expected.contains(gzipError.code))
        #expect(error?.response?.value(forHTTPHeaderField: "Content-Encoding") == "gzip")
        #expect(error?.data == received)
        #expect(
            events.events(from: "gzip", named: "response_inflate_failed").first?.attributes["reason"]
                == gzipError.code.description
        )
    }

    @Test("a decompression bomb stops at the output limit")
    func bombOutputLimit() async throws {
        let bomb = try Sample.zeroBomb(megabytes: 32)
        let limits = Inflater.Limits(maximumOutputBytes: 8 << 20, maximumRatio: .infinity)
        let error = await #expect(throws: NetworkAgentError.self) {
            _ = try await Self.stubbedResponse(
                body: bomb,
                headers: ["Content-Encoding": "gzip"],
                plugin: .gzip(limits: limits)
            )
        }
        #expect(error?.code == .invalidResponse)
        #expect((error?.underlying as? GzipPlugin.Error)?.code == .outputLimitExceeded)
    }

    @Test("a decompression bomb stops at the ratio limit, also as raw deflate")
    func bombRatioLimit() async throws {
        let zeros = Data(count: 4 << 20)
        let limits = Inflater.Limits(maximumRatio: 100)
        for (encoding, format) in [("gzip", Deflater.Format.gzip), ("deflate", .raw)] {
            let bomb = try Deflater.compress(zeros, format: format, level: 9)
            let error = await #expect(throws: NetworkAgentError.self) {
                _ = try await Self.stubbedResponse(
                    body: bomb,
                    headers: ["Content-Encoding": encoding],
                    plugin: .gzip(limits: limits)
                )
            }
            #expect((error?.underlying as? GzipPlugin.Error)?.code == .ratioLimitExceeded, "\(encoding)")
        }
    }

    @Test("Accept-Encoding is advertised to other transports unless the request has one")
    func acceptEncodingForOtherTransports() async throws {
        let (_, _, stub) = try await Self.stubbedResponse(body: Data("{}".utf8), headers: [:])
        #expect(stub.requests.first?.value(forHTTPHeaderField: "Accept-Encoding") == GzipPlugin.acceptEncoding)

        let own = StubTransport(fallback: .status(204))
        let provider = NetworkAgentProvider<GzipEndpoint>(plugins: [.gzip()], agent: NetworkAgent(transport: own))
        _ = try await provider.request(
            endpoint: GzipEndpoint(
                baseURL: URL(string: "http://stub.test")!,
                method: .get,
                headers: ["Accept-Encoding": "identity"]
            )
        )
        #expect(own.requests.first?.value(forHTTPHeaderField: "Accept-Encoding") == "identity")
    }

    @Test("interceptors registered before gzip see the decoded response")
    func outerInterceptorsSeeDecodedResponse() async throws {
        final class Snoop: NetworkAgentPlugin {
            let seen = Locked<[String]>([])
            func intercept(
                _ request: URLRequest,
                endpoint: any NetworkAgentEndpoint,
                next: NetworkAgentExchange
            ) async throws -> (data: Data, response: URLResponse) {
                let (data, response) = try await next(request)
                let encoding = (response as? HTTPURLResponse)?.value(forHTTPHeaderField: "Content-Encoding") ?? "-"
                seen.withLock { $0.append("\(encoding) \(data.count)") }
                return (data, response)
            }
        }
        let snoop = Snoop()
        let original = Sample.json(count: 3_000)
        let compressed = try Deflater.compress(original)
        let stub = StubTransport(fallback: .init(headers: ["Content-Encoding": "gzip"], body: compressed))
        let provider = NetworkAgentProvider<GzipEndpoint>(
            plugins: [snoop, .gzip()],
            agent: NetworkAgent(transport: stub)
        )
        _ = try await provider.request(endpoint: GzipEndpoint(baseURL: URL(string: "http://stub.test")!, method: .get))
        #expect(snoop.seen.withLock { $0 } == ["- \(original.count)"])
    }

    // MARK: - Response decoding over the wire
    // Under URLSessionTransport libcurl decodes and the plugin fixes the headers; CurlTransport hands over the bytes
    // as sent and the plugin inflates them.

    @Test(
        "a compressed response over the wire reaches the caller decoded, with consistent headers",
        arguments: [("gzip", Deflater.Format.gzip), ("deflate", .zlib), ("deflate", .raw)]
    )
    func overTheWireResponse(encoding: String, format: Deflater.Format) async throws {
        let original = Sample.json(count: 300_000)
        let compressed = try Deflater.compress(original, format: format)
        let server = try LoopbackServer { _ in
            .json(compressed, headers: [("Content-Encoding", encoding)])
        }
        defer { server.stop() }
        let events = EventRecorder()
        let provider = NetworkAgentProvider<GzipEndpoint>(plugins: [.gzip()], agent: TestTransport.agent())
        let (data, response) = try await events.observing {
            try await provider.request(endpoint: GzipEndpoint(baseURL: server.baseURL, method: .get))
        }
        let http = try #require(response as? HTTPURLResponse)
        #expect(data == original)
        #expect(http.value(forHTTPHeaderField: "Content-Encoding") == nil)
        #expect(http.value(forHTTPHeaderField: "Content-Length") == "\(original.count)")
        #expect(http.value(forHTTPHeaderField: "Content-Type") == "application/json")
        switch TestTransport.kind {
        case .urlSession:
            #expect(events.events(from: "gzip", named: "response_headers_normalized").count == 1)
            #expect(events.events(from: "gzip", named: "response_inflated").isEmpty)
        case .curl:
            #expect(events.events(from: "gzip", named: "response_inflated").count == 1)
            #expect(events.events(from: "gzip", named: "response_headers_normalized").isEmpty)
        }
    }

    @Test("a doubly gzipped body over the wire keeps its inner layer: a .gz file stays a .gz file")
    func doublyEncodedOverTheWire() async throws {
        // A server serving a .gz file with Content-Encoding: gzip on top. The outer layer is removed once (by
        // libcurl under URLSessionTransport, by the plugin under CurlTransport); the body left has gzip magic bytes
        // but is the resource itself, so it must not be inflated again.
        let archive = try Deflater.compress(Sample.json(count: 50_000))
        let doubly = try Deflater.compress(archive)
        let server = try LoopbackServer { _ in
            ServerResponse(
                headers: [("Content-Type", "application/gzip"), ("Content-Encoding", "gzip")],
                body: .data(doubly)
            )
        }
        defer { server.stop() }
        let provider = NetworkAgentProvider<GzipEndpoint>(plugins: [.gzip()], agent: TestTransport.agent())
        let (data, response) = try await provider.request(endpoint: GzipEndpoint(baseURL: server.baseURL, method: .get))
        #expect(data == archive)
        #expect((response as? HTTPURLResponse)?.value(forHTTPHeaderField: "Content-Encoding") == nil)
    }

    @Test("URLSession's own Accept-Encoding is not replaced; to a transport that does not decode, the plugin's goes")
    func acceptEncodingOnTheWire() async throws {
        let server = try LoopbackServer { request in .text(request.header("Accept-Encoding") ?? "none") }
        defer { server.stop() }
        let provider = NetworkAgentProvider<GzipEndpoint>(plugins: [.gzip()], agent: TestTransport.agent())
        let (data, _) = try await provider.request(endpoint: GzipEndpoint(baseURL: server.baseURL, method: .get))
        let advertised = String(decoding: data, as: UTF8.self)
        switch TestTransport.kind {
        case .urlSession:
            // libcurl under FoundationNetworking always advertises (and decodes) its own list.
            #expect(advertised != GzipPlugin.acceptEncoding)
            #expect(advertised.contains("gzip"))
        case .curl:
            #expect(advertised == GzipPlugin.acceptEncoding)
        }
    }

    /// A server that compresses a streamed body unasked: URLSession's libcurl decodes it; a transport that hands
    /// bodies over as sent (CurlTransport) hands it over compressed, with its `Content-Encoding` (a streamed body
    /// does not pass through the plugin, which therefore never asks for one compressed: Docs/Gzip.md).
    @Test("a streamed response compressed unasked arrives decoded by URLSession, as sent by CurlTransport")
    func streamedResponse() async throws {
        let original = Sample.json(count: 100_000)
        let compressed = try Deflater.compress(original)
        let server = try LoopbackServer { request in
            .json(
                compressed,
                headers: [("Content-Encoding", "gzip"), ("X-Asked", request.header("Accept-Encoding") ?? "")]
            )
        }
        defer { server.stop() }
        let provider = NetworkAgentProvider<GzipEndpoint>(plugins: [.gzip()], agent: TestTransport.agent())
        let stream = try await provider.stream(endpoint: GzipEndpoint(baseURL: server.baseURL, method: .get))
        var received = Data()
        for try await chunk in stream.body {
            received.append(chunk)
        }
        // The count first: on a mismatch, a diff of two 100 kB bodies would take minutes to print.
        switch TestTransport.kind {
        case .urlSession:
            #expect(received.count == original.count && received == original)
        case .curl:
            #expect(stream.response.value(forHTTPHeaderField: "X-Asked") == "", "a stream never asks for gzip")
            #expect(stream.response.value(forHTTPHeaderField: "Content-Encoding") == "gzip")
            #expect(received.count == compressed.count && received == compressed)
        }
    }
}

// MARK: - Memory (runs alone, with the codec's memory tests, under NETWORKAGENT_MEMORY_TESTS=1)

// In the codec suite, which is serialized, so no other memory test runs at the same time.
extension CodecTests {
    @Test(
        "a 64 MiB file-backed body is compressed with constant memory",
        .enabled(if: Memory.isAvailable, Memory.runsAlone),
        .enabled(if: Memory.canResetPeak, Memory.needsPeakReset),
        .timeLimit(.minutes(2))
    )
    func fileCompressionMemoryBound() async throws {
        let block = Sample.json(count: 1 << 20, seed: 7)
        let repetitions = 64
        let source = FileManager.default.temporaryDirectory.appendingPathComponent("gzip-memory-\(UUID()).json")
        #expect(FileManager.default.createFile(atPath: source.path, contents: nil))
        defer { try? FileManager.default.removeItem(at: source) }
        let writer = try FileHandle(forWritingTo: source)
        for _ in 0..<repetitions {
            try writer.write(contentsOf: block)
        }
        try writer.close()

        var request = URLRequest(url: URL(string: "http://stub.test")!)
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBodyStream = FileBackedBodyStream(fileURL: source)
        // Without the reset, the peak of writing the file above would hide any growth.
        try #require(Memory.resetPeak(), Memory.needsPeakReset)
        let before = try #require(Memory.kilobytes("VmHWM"))
        let sent = try await GzipPlugin(level: 1).onRequest(
            request,
            endpoint: GzipEndpoint(baseURL: URL(string: "http://stub.test")!)
        )
        let after = try #require(Memory.kilobytes("VmHWM"))
        let grownMiB = (after - before) / 1024
        #expect(grownMiB < 24, "peak memory grew by \(grownMiB) MiB")

        // The compressed file inflates, chunk by chunk, to the block repeated.
        let stream = try #require(sent.httpBodyStream as? FileBackedBodyStream)
        let reader = try FileHandle(forReadingFrom: stream.fileURL)
        defer { try? reader.close() }
        var inflater = Inflater(format: .gzip)
        var checked = 0
        var mismatch = false
        while let chunk = try reader.read(upToCount: 256 * 1024), !chunk.isEmpty {
            let output = try inflater.decompress(chunk)
            var offset = 0
            while offset < output.count && !mismatch {
                let position = (checked + offset) % block.count
                let length = min(block.count - position, output.count - offset)
                let start = output.startIndex + offset
                mismatch = output[start..<(start + length)] != block[position..<(position + length)]
                offset += length
            }
            checked += output.count
        }
        _ = try inflater.finish()
        #expect(!mismatch)
        #expect(checked == block.count * repetitions)
    }
}
