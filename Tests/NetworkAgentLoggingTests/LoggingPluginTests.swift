import Foundation
import NetworkAgent
import NetworkAgentLogging
import NetworkAgentTestServer
import NetworkAgentTestSupport
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The logging plugin over the wire: what each level writes, the structured records, events, failures.
@Suite struct LoggingPluginTests {
    let agent = TestTransport.agent(configuration: NetworkAgentConfiguration(userAgent: "test-agent"))

    func provider(_ plugins: [any NetworkAgentPlugin]) -> NetworkAgentProvider<TestEndpoint> {
        NetworkAgentProvider(plugins: plugins, agent: agent)
    }

    @Test func noneLogsNothing() async throws {
        let server = try LoopbackServer { _ in .text("ok") }
        let collector = RecordCollector()
        _ = try await provider([.logging(.none, sink: collector.sink)])
            .request(endpoint: TestEndpoint(baseURL: server.baseURL))
        #expect(collector.records.isEmpty)
    }

    @Test func basicWritesOneLineForTheRequestAndOneForTheResponse() async throws {
        let server = try LoopbackServer { _ in .text("ok") }
        let collector = RecordCollector()
        let endpoint = TestEndpoint(
            baseURL: server.baseURL,
            path: "/items",
            task: .requestAttributes(attributes: ["q": "swift"], encoding: .url)
        )
        _ = try await provider([.logging(sink: collector.sink)]).request(endpoint: endpoint)

        let url = "\(server.baseURL.absoluteString)/items?q=swift"
        #expect(collector.records.map(\.kind) == [.request, .event, .response])
        let request = try #require(collector.only(.request))
        #expect(request.message == "--> GET \(url)")
        #expect(request.severity == .info)
        #expect(request.metadata["method"] == "GET")
        #expect(request.metadata["url"] == url)
        #expect(request.metadata["request_bytes"] == "0")

        let response = try #require(collector.only(.response))
        #expect(!response.message.contains("\n"))
        #expect(response.message.normalizingDurations == "<-- 200 GET \(url) (T ms, 2-byte body)")
        #expect(response.metadata["status"] == "200")
        #expect(response.metadata["response_bytes"] == "2")
        let milliseconds = try #require(response.metadata["duration_ms"].flatMap(Double.init))
        #expect(milliseconds >= 0 && milliseconds < 10_000)
        #expect(response.metadata["call_id"] == request.metadata["call_id"])

        // The one network attempt shows as the transport's event.
        let event = try #require(collector.only(.event))
        #expect(event.severity == .debug)
        #expect(event.metadata["event"] == "transport.response_headers")
    }

    @Test func basicNotesTheRequestBodySize() async throws {
        let server = try LoopbackServer { _ in .text("") }
        let collector = RecordCollector()
        let endpoint = TestEndpoint(
            baseURL: server.baseURL,
            path: "/items",
            method: .post,
            task: .requestWithoutAttributes(content: "hello")
        )
        _ = try await provider([.logging(sink: collector.sink)]).request(endpoint: endpoint)
        let request = try #require(collector.only(.request))
        #expect(request.message == "--> POST \(server.baseURL.absoluteString)/items (5-byte body)")
        #expect(request.metadata["request_bytes"] == "5")
    }

    @Test func headersWritesBlocksWithTheRequestAsSent() async throws {
        let server = try LoopbackServer { _ in .text("ok", headers: [("X-Server", "loop")]) }
        let collector = RecordCollector()
        let endpoint = TestEndpoint(
            baseURL: server.baseURL,
            path: "/items",
            headers: ["Accept": "application/json", "Authorization": "Bearer sekrit"]
        )
        /// Adds a header in `onRequest`, after which the logged request must show it.
        struct Tagger: NetworkAgentPlugin {
            func onRequest(_ request: URLRequest, endpoint: any NetworkAgentEndpoint) async throws -> URLRequest {
                var request = request
                request.setValue("abc", forHTTPHeaderField: "X-Trace")
                return request
            }
        }
        _ = try await provider([.logging(.headers, sink: collector.sink), Tagger()]).request(endpoint: endpoint)

        let request = try #require(collector.only(.request))
        #expect(
            request.message == """
                --> GET \(server.baseURL.absoluteString)/items
                Accept: application/json
                Authorization: <redacted>
                User-Agent: test-agent
                X-Trace: abc
                --> END GET (0-byte body)
                """
        )
        let response = try #require(collector.only(.response))
        let lines = response.message.normalizingDurations.components(separatedBy: "\n")
        #expect(lines.first == "<-- 200 GET \(server.baseURL.absoluteString)/items (T ms)")
        #expect(lines.contains("X-Server: loop"))
        #expect(lines.contains("Content-Type: text/plain; charset=utf-8"))
        #expect(lines.last == "<-- END HTTP (2-byte body)")
        #expect(!lines.contains("ok"))
        #expect(!collector.allText.contains("sekrit"))
    }

    @Test func bodyAddsBothBodies() async throws {
        let server = try LoopbackServer { request in .json(Data(#"{"echo":\#(request.bodyText)}"#.utf8)) }
        let collector = RecordCollector()
        let endpoint = TestEndpoint(
            baseURL: server.baseURL,
            path: "/items",
            method: .post,
            headers: ["Content-Type": "application/json"],
            task: .requestAttributes(attributes: ["name": "x"], encoding: .json)
        )
        _ = try await provider([.logging(.body, sink: collector.sink)]).request(endpoint: endpoint)

        let request = try #require(collector.only(.request)).message.components(separatedBy: "\n")
        #expect(Array(request.suffix(3)) == ["", #"{"name":"x"}"#, "--> END POST (12-byte body)"])
        let response = try #require(collector.only(.response)).message.components(separatedBy: "\n")
        #expect(Array(response.suffix(3)) == ["", #"{"echo":{"name":"x"}}"#, "<-- END HTTP (21-byte body)"])
    }

    @Test func bodyPrettyPrintsJSONWhenAsked() async throws {
        let server = try LoopbackServer { _ in .json(Data(#"{"b":[1,2],"a":"x/y"}"#.utf8)) }
        let collector = RecordCollector()
        _ = try await provider([.logging(.body, prettyPrintsJSON: true, sink: collector.sink)])
            .request(endpoint: TestEndpoint(baseURL: server.baseURL))
        let response = try #require(collector.only(.response)).message
        let pretty = try JSONSerialization.data(
            withJSONObject: ["a": "x/y", "b": [1, 2]],
            options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        )
        #expect(response.contains("\n" + String(decoding: pretty, as: UTF8.self) + "\n<-- END HTTP (21-byte body)"))
    }

    @Test func bodiesAreCappedAndTheRestCounted() async throws {
        let text = String(repeating: "abcdefghij", count: 100) + "é"
        let server = try LoopbackServer { _ in .text(text) }
        let collector = RecordCollector()
        _ = try await provider([.logging(.body, bodyLimit: 25, sink: collector.sink)])
            .request(endpoint: TestEndpoint(baseURL: server.baseURL))
        let lines = try #require(collector.only(.response)).message.components(separatedBy: "\n")
        #expect(lines.contains("abcdefghijabcdefghijabcde… (977 more bytes)"))
        #expect(lines.last == "<-- END HTTP (1002-byte body)")
    }

    @Test func theCapNeverSplitsACharacter() async throws {
        let server = try LoopbackServer { _ in .text("ééé") }
        let collector = RecordCollector()
        _ = try await provider([.logging(.body, bodyLimit: 3, sink: collector.sink)])
            .request(endpoint: TestEndpoint(baseURL: server.baseURL))
        let lines = try #require(collector.only(.response)).message.components(separatedBy: "\n")
        #expect(lines.contains("é… (4 more bytes)"))
    }

    @Test(arguments: [
        ("image/png", Data([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), "(binary body, 8 bytes, image/png)"),
        ("text/plain", Data([0x66, 0x6f, 0xff, 0xfe]), "(binary body, 4 bytes, text/plain)"),
        ("application/json", Data([0x7b, 0x00, 0x7d]), "(binary body, 3 bytes, application/json)"),
        ("application/octet-stream", Data("readable".utf8), "(binary body, 8 bytes, application/octet-stream)"),
    ])
    func binaryBodiesAreSummarised(contentType: String, body: Data, summary: String) async throws {
        let server = try LoopbackServer { _ in
            ServerResponse(headers: [("Content-Type", contentType)], body: .data(body))
        }
        let collector = RecordCollector()
        _ = try await provider([.logging(.body, sink: collector.sink)])
            .request(endpoint: TestEndpoint(baseURL: server.baseURL))
        let lines = try #require(collector.only(.response)).message.components(separatedBy: "\n")
        #expect(lines.contains(summary))
    }

    @Test func multipartRequestBodiesAreSummarised() async throws {
        let server = try LoopbackServer { _ in .text("") }
        let collector = RecordCollector()
        let endpoint = TestEndpoint(
            baseURL: server.baseURL,
            method: .post,
            task: .upload(parts: [HTTPMultipartTask(data: Data("hunter2".utf8), name: "password")])
        )
        _ = try await provider([.logging(.body, sink: collector.sink)]).request(endpoint: endpoint)
        let request = try #require(collector.only(.request)).message
        #expect(request.contains("(multipart body, "))
        #expect(!request.contains("hunter2"))
    }

    @Test func eventsOfInnerPluginsAndCacheAnswersAreLogged() async throws {
        let server = try LoopbackServer { _ in .text("network") }
        let collector = RecordCollector()
        let retry = NetworkAgentEvent(.retryScheduled(delay: .zero), attributes: ["attempt": "1"])
        let (data, _) = try await provider([.logging(sink: collector.sink), EventEmitter(event: retry), CannedAnswer()])
            .request(endpoint: TestEndpoint(baseURL: server.baseURL))
        #expect(String(decoding: data, as: UTF8.self) == "cached")
        #expect(server.requestCount == 0)
        #expect(
            collector.records(.event).map(\.message) == [
                "--- retry.retry_scheduled attempt=1", "--- cache.hit age_s=3",
            ]
        )
        #expect(collector.records(.event).first?.metadata["event.attempt"] == "1")
    }

    @Test func secretsInEventAttributesAreRedacted() async throws {
        let server = try LoopbackServer { _ in .text("") }
        let collector = RecordCollector()
        let careless = NetworkAgentEvent(source: "bad", name: "leak", attributes: ["access_token": "sekrit"])
        _ = try await provider([.logging(sink: collector.sink), EventEmitter(event: careless)])
            .request(endpoint: TestEndpoint(baseURL: server.baseURL))
        #expect(collector.records(.event).first?.message == "--- bad.leak access_token=<redacted>")
        #expect(!collector.allText.contains("sekrit"))
    }

    @Test func outsideARetryItLogsTheCallOnceWithRetriesAsEvents() async throws {
        let calls = Locked(0)
        let server = try LoopbackServer { _ in
            calls.withLock { count in
                count += 1
                return count
            } < 3 ? .text("busy", status: 503) : .text("ok")
        }
        let collector = RecordCollector()
        _ = try await provider([.logging(sink: collector.sink), FakeRetry(attempts: 3)])
            .request(endpoint: TestEndpoint(baseURL: server.baseURL))
        #expect(collector.records(.request).count == 1)
        #expect(collector.records(.response).map { $0.metadata["status"] } == ["200"])
        let events = collector.records(.event).compactMap { $0.metadata["event"] }
        #expect(events.filter { $0 == "retry.retry_scheduled" }.count == 2)
        #expect(events.filter { $0 == "transport.response_headers" }.count == 3)
    }

    @Test func insideARetryItLogsEveryAttempt() async throws {
        let calls = Locked(0)
        let server = try LoopbackServer { _ in
            calls.withLock { count in
                count += 1
                return count
            } < 3 ? .text("busy", status: 503) : .text("ok")
        }
        let collector = RecordCollector()
        _ = try await provider([FakeRetry(attempts: 3), .logging(sink: collector.sink)])
            .request(endpoint: TestEndpoint(baseURL: server.baseURL))
        #expect(collector.records(.request).count == 3)
        #expect(collector.records(.response).map { $0.metadata["status"] } == ["503", "503", "200"])
        #expect(Set(collector.records.compactMap { $0.metadata["call_id"] }).count == 3)
    }

    @Test func failuresAreLoggedAndRethrownUnchanged() async throws {
        let probe = try LoopbackServer { _ in .text("") }
        let base = probe.baseURL
        probe.stop()
        let collector = RecordCollector()
        let endpoint = TestEndpoint(
            baseURL: base,
            path: "/x",
            task: .requestAttributes(attributes: ["token": "sekrit"], encoding: .url)
        )
        let error = try await #require(throws: NetworkAgentError.self) {
            try await provider([.logging(sink: collector.sink)]).request(endpoint: endpoint)
        }
        #expect(error.code == .transport)
        let failure = try #require(collector.only(.failure))
        #expect(failure.severity == .error)
        #expect(failure.metadata["error"] == "transport")
        #expect(failure.message.hasPrefix("<-- FAILED GET \(base.absoluteString)/x?token=<redacted> ("))
        #expect(collector.records(.response).isEmpty)
        #expect(!collector.allText.contains("sekrit"))
    }

    @Test func timeoutMessagesQuoteTheRedactedURL() async throws {
        let server = try LoopbackServer { _ in ServerResponse(fault: .stall) }
        defer { server.stop() }
        let collector = RecordCollector()
        let endpoint = TestEndpoint(
            baseURL: server.baseURL,
            task: .requestAttributes(attributes: ["api_key": "sekrit"], encoding: .url),
            timeout: .milliseconds(200)
        )
        let error = try await #require(throws: NetworkAgentError.self) {
            try await provider([.logging(sink: collector.sink)]).request(endpoint: endpoint)
        }
        #expect(error.code == .timedOut)
        #expect(error.message.contains("sekrit"))  // the core's message, untouched
        let failure = try #require(collector.only(.failure))
        #expect(failure.message.contains("api_key=<redacted>"))
        #expect(!collector.allText.contains("sekrit"))
    }

    @Test func loggingChangesNeitherRequestNorResponse() async throws {
        let server = try LoopbackServer { request in
            .text("\(request.method) \(request.target) \(request.header("Authorization") ?? "-") \(request.bodyText)")
        }
        let endpoint = TestEndpoint(
            baseURL: server.baseURL,
            path: "/p",
            method: .post,
            headers: ["Authorization": "Bearer t", "Content-Type": "application/json"],
            task: .requestAttributes(attributes: ["password": "p"], encoding: .json)
        )
        let plain = try await provider([]).request(endpoint: endpoint)
        let collector = RecordCollector()
        let logged = try await provider([.logging(.body, logsCURLCommands: true, sink: collector.sink)])
            .request(endpoint: endpoint)
        #expect(plain.data == logged.data)
        #expect(String(decoding: logged.data, as: UTF8.self) == #"POST /p Bearer t {"password":"p"}"#)
        #expect((logged.response as? HTTPURLResponse)?.statusCode == 200)
    }

    @Test func curlCommandsAreLoggedWhenAsked() async throws {
        let server = try LoopbackServer { _ in .text("") }
        let collector = RecordCollector()
        let endpoint = TestEndpoint(baseURL: server.baseURL, path: "/c", headers: ["X-API-Key": "k"])
        _ = try await provider([.logging(logsCURLCommands: true, sink: collector.sink)]).request(endpoint: endpoint)
        let curl = try #require(collector.only(.curl))
        // Foundation stores header names canonicalised (`X-Api-Key`).
        #expect(
            curl.message == """
                curl '\(server.baseURL.absoluteString)/c' \\
                  -H 'User-Agent: test-agent' \\
                  -H 'X-Api-Key: <redacted>'
                """
        )
    }

    @Test func concurrentCallsGetDistinctCallIDs() async throws {
        let server = try LoopbackServer { _ in .text("ok") }
        let collector = RecordCollector()
        let provider = provider([.logging(sink: collector.sink)])
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<10 {
                group.addTask {
                    _ = try await provider.request(endpoint: TestEndpoint(baseURL: server.baseURL, path: "/\(index)"))
                }
            }
            try await group.waitForAll()
        }
        let requests = collector.records(.request)
        #expect(Set(requests.compactMap { $0.metadata["call_id"] }).count == 10)
        for request in requests {
            let responses = collector.records(.response).filter {
                $0.metadata["call_id"] == request.metadata["call_id"]
            }
            #expect(responses.map { $0.metadata["url"] } == [request.metadata["url"]])
        }
    }
}
