import Foundation
import NetworkAgent
import Testing

@testable import NetworkAgentLogging

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The records whose text is made when read (issue 29: a sink that drops records does not pay for their text) read
/// exactly what the records built at once held, and behave as records with that text given.
@Suite struct DeferredRecordTests {
    /// The message and metadata of a `.basic` request record, made at once as the plugin made them before.
    private static func eagerRequest(_ formatter: RecordFormatter) -> (String, [String: String]) {
        let request = formatter.request
        let method = request.httpMethod ?? "GET"
        let body = request.httpBody ?? Data()
        let streamed = request.httpBodyStream != nil
        var metadata = ["call_id": String(formatter.callID), "method": method, "url": formatter.url]
        if !streamed { metadata["request_bytes"] = String(body.count) }
        let size = streamed ? "streamed body" : "\(body.count)-byte body"
        let note = streamed || !body.isEmpty ? " (\(size))" : ""
        return ("--> \(method) \(formatter.url)\(note)", metadata)
    }

    /// The same for a `.basic` response record.
    private static func eagerResponse(
        _ formatter: RecordFormatter,
        _ response: URLResponse,
        data: Data,
        duration: Duration
    ) -> (String, [String: String]) {
        let request = formatter.request
        let method = request.httpMethod ?? "GET"
        let http = response as? HTTPURLResponse
        let status = http.map { String($0.statusCode) } ?? "non-HTTP response"
        let responseURL: String
        if let url = response.url, url.absoluteString != request.url?.absoluteString {
            responseURL = formatter.renderer.policy.redactedString(for: url)
        } else {
            responseURL = formatter.url
        }
        let milliseconds = RecordFormatter.milliseconds(duration)
        var metadata = ["call_id": String(formatter.callID), "method": method, "url": responseURL]
        metadata["status"] = http.map { String($0.statusCode) }
        metadata["duration_ms"] = milliseconds
        metadata["response_bytes"] = String(data.count)
        return ("<-- \(status) \(method) \(responseURL) (\(milliseconds) ms, \(data.count)-byte body)", metadata)
    }

    /// The same for an event record.
    private static func eagerEvent(
        _ formatter: RecordFormatter,
        _ event: NetworkAgentEvent
    ) -> (String, [String: String]) {
        let policy = formatter.renderer.policy
        var shown = event
        var metadata = [
            "call_id": String(formatter.callID), "method": formatter.request.httpMethod ?? "GET", "url": formatter.url,
        ]
        metadata["event"] = event.source + "." + event.name
        for (key, value) in event.attributes {
            let safe = policy.redactedAttribute(key: key, value: value)
            shown.attributes[key] = safe
            metadata["event." + key] = safe
        }
        return ("--- " + shown.description, metadata)
    }

    private static func formatter(_ request: URLRequest, callID: Int = 7) -> RecordFormatter {
        RecordFormatter(
            level: .basic,
            callID: callID,
            request: request,
            renderer: BodyRenderer(policy: RedactionPolicy(), limit: nil, prettyPrintsJSON: false)
        )
    }

    private static func requests() throws -> [URLRequest] {
        var requests: [URLRequest] = []
        for text in ["https://example.com/a", "https://u:p@example.com/a?token=s3cret&x=1", "http://h:8080/p#f"] {
            let url = try #require(URL(string: text))
            requests.append(URLRequest(url: url))
            var post = URLRequest(url: url)
            post.httpMethod = "POST"
            post.httpBody = Data("hello".utf8)
            requests.append(post)
            var empty = URLRequest(url: url)
            empty.httpMethod = "PUT"
            empty.httpBody = Data()
            requests.append(empty)
            var streamed = URLRequest(url: url)
            streamed.httpMethod = "PATCH"
            streamed.httpBodyStream = InputStream(data: Data("x".utf8))
            requests.append(streamed)
        }
        return requests
    }

    @Test func requestRecordsReadAsTheRecordsBuiltAtOnce() throws {
        for request in try Self.requests() {
            let formatter = Self.formatter(request)
            let record = formatter.requestRecord()
            let (message, metadata) = Self.eagerRequest(formatter)
            #expect(record.message == message)
            #expect(record.metadata == metadata)
            #expect(record.severity == .info && record.kind == .request)
            #expect(record == LogRecord(severity: .info, kind: .request, message: message, metadata: metadata))
        }
    }

    @Test func responseRecordsReadAsTheRecordsBuiltAtOnce() throws {
        let other = try #require(URL(string: "https://elsewhere.example/z?password=hunter2"))
        for request in try Self.requests() {
            let formatter = Self.formatter(request)
            let url = try #require(request.url)
            let responses: [URLResponse] = [
                try #require(HTTPURLResponse(url: url, statusCode: 200, httpVersion: nil, headerFields: [:])),
                try #require(HTTPURLResponse(url: other, statusCode: 503, httpVersion: nil, headerFields: [:])),
                URLResponse(url: url, mimeType: nil, expectedContentLength: 0, textEncodingName: nil),
                URLResponse(url: other, mimeType: nil, expectedContentLength: 0, textEncodingName: nil),
            ]
            for response in responses {
                for (data, duration) in [(Data(), Duration.zero), (Data(count: 1_234), .microseconds(12_345))] {
                    let record = formatter.responseRecord(response, data: data, duration: duration)
                    let (message, metadata) = Self.eagerResponse(formatter, response, data: data, duration: duration)
                    #expect(record.message == message)
                    #expect(record.metadata == metadata)
                    #expect(!record.message.contains("hunter2") && !record.message.contains("s3cret"))
                    let given = LogRecord(severity: .info, kind: .response, message: message, metadata: metadata)
                    #expect(record == given && record.hashValue == given.hashValue)
                }
            }
        }
    }

    @Test func eventRecordsReadAsTheRecordsBuiltAtOnce() throws {
        let events = [
            NetworkAgentEvent.responseHeaders(after: .microseconds(1_500)),
            NetworkAgentEvent(.cacheMiss),
            NetworkAgentEvent(
                .retryScheduled(delay: .milliseconds(200)),
                attributes: ["attempt": "1", "delay_ms": "200"]
            ),
            NetworkAgentEvent(
                source: "x",
                name: "y",
                attributes: ["token": "s3cret", "url": "https://u:pw@h/?api_key=k"]
            ),
        ]
        for request in try Self.requests() {
            let formatter = Self.formatter(request)
            for event in events {
                let record = formatter.eventRecord(event)
                let (message, metadata) = Self.eagerEvent(formatter, event)
                #expect(record.message == message)
                #expect(record.metadata == metadata)
                #expect(record.severity == .debug && record.kind == .event)
                #expect(!record.message.contains("s3cret") && !record.message.contains(":pw@"))
            }
        }
    }

    /// Setting the text of a record made when read keeps what was set and makes the rest as before.
    @Test func settingTheTextOfADeferredRecordKeepsTheRest() throws {
        let request = URLRequest(url: try #require(URL(string: "https://example.com/a")))
        let formatter = Self.formatter(request)
        var record = formatter.requestRecord()
        let metadata = record.metadata
        record.message = "changed"
        #expect(record.message == "changed" && record.metadata == metadata)
        record.metadata["extra"] = "1"
        #expect(record.message == "changed" && record.metadata["extra"] == "1" && record.metadata["call_id"] == "7")
        var other = formatter.requestRecord()
        other.metadata = [:]
        #expect(other.metadata.isEmpty && other.message == "--> GET https://example.com/a")
        #expect(Set([record, record, other]).count == 2)
    }
}
