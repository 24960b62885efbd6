import Foundation
import NetworkAgent
import Testing

@testable import NetworkAgentLogging

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The logging plugin's shortcuts for text it writes into every record (issue 29) give exactly what the long way
/// gives.
@Suite struct RecordTextTests {
    /// Durations as milliseconds with one decimal, as `String(format: "%.1f")` writes them: ties (0.25 ms), values
    /// whose double is just below or above a tie (0.15 ms), round ones, large ones and random ones.
    @Test func millisecondsAreWrittenAsPrintfWritesThem() {
        var generator = SystemRandomNumberGenerator()
        var durations: [Duration] = [
            .zero, .microseconds(50), .microseconds(150), .microseconds(250), .microseconds(350), .microseconds(949),
            .microseconds(950), .microseconds(999), .milliseconds(1), .milliseconds(12), .seconds(59), .seconds(86_400),
            .seconds(1_000_000_000), .nanoseconds(1), .nanoseconds(49_999), .nanoseconds(50_000), .nanoseconds(50_001),
        ]
        for _ in 0..<20_000 {
            durations.append(.nanoseconds(Int64.random(in: 0..<10_000_000_000, using: &generator)))
            durations.append(.nanoseconds(50_000 * Int64.random(in: 0..<1_000_000, using: &generator)))
        }
        for duration in durations {
            let expected = String(format: "%.1f", duration.timeInterval * 1_000)
            #expect(RecordFormatter.milliseconds(duration) == expected, "\(duration)")
        }
    }

    /// A URL without query, fragment or user info is shown as its own text: what the `URLComponents` path rebuilds.
    @Test func aURLWithNothingToRedactIsShownAsParsed() throws {
        let texts = [
            "http://127.0.0.1:8080/plain/data.json", "https://example.com", "https://example.com/", "http://[::1]:80/a",
            "https://EXAMPLE.com/A%20b/%C3%A9?", "https://example.com/a;b=c/d", "http://example.com:/x",
            "https://example.com/ñ/ü", "https://bücher.example/", "file:///tmp/a%20b", "https://example.com/a/../b",
            "https://example.com//double//slash", "http://example.com/%zz", "https://example.com/a:b",
            "http://example.com:080/x", "http://example.com:0/x", "http://example.com:65535", "http://[::1]:/x",
            "http://[::1]:08/x", "http://[fe80::1%25eth0]:8080/x", "http://example.com:8a/x",
            "https://example.com:443/",
            "mailto:someone", "urn:isbn:123", "http:/example.com/x", "HTTP://Example.COM:1/X",
        ]
        let policy = RedactionPolicy()
        for text in texts {
            guard let url = URL(string: text) else { continue }
            #expect(policy.redactedString(for: url) == policy.parsedRedactedString(for: url), "\(text)")
        }
        // The shortcut is taken for the URLs a service calls.
        #expect(RedactionPolicy.isShownAsIs("http://127.0.0.1:8080/plain/data.json"))
        #expect(RedactionPolicy.isShownAsIs("https://api.example.com/v1/items/25"))
        let base = try #require(URL(string: "https://example.com/api/"))
        let relative = try #require(URL(string: "v1/items", relativeTo: base))
        #expect(policy.redactedString(for: relative) == policy.parsedRedactedString(for: relative))
    }

    /// The byte search for `://` finds what Foundation's `range(of:)` finds, in ASCII text and in other text.
    @Test func schemeSeparatorIsFoundationsMatch() {
        let texts = [
            "", ":", "://", "a://b", "a:/b://c", "a::://b", "no separator", "x:/", "x:", "http://h/p://q",
            "ñandu://x", "e\u{301}://x", "a:\u{301}//b", "seconds=0.25", "see https://u:p@h/x and ftp://h",
        ]
        for text in texts {
            for start in [text.startIndex, text.index(text.startIndex, offsetBy: min(2, text.count))] {
                let slice = text[start...]
                #expect(RedactionPolicy.schemeSeparator(in: slice) == slice.range(of: "://"), "\(text)")
            }
        }
    }
    /// Every record starts from the call's metadata made once per call: each kind of record has exactly the entries
    /// it had when it built its own (the call's three, then its own; an event with more attributes than the shared
    /// room, and a POST, included).
    @Test func recordsKeepTheirMetadataWhenTheyCopyTheCallsEntries() throws {
        var request = URLRequest(url: try #require(URL(string: "https://example.com/a?token=s3cret")))
        request.httpMethod = "POST"
        request.httpBody = Data("hello".utf8)
        let formatter = RecordFormatter(
            level: .basic,
            callID: 42,
            request: request,
            renderer: BodyRenderer(policy: RedactionPolicy(), limit: nil, prettyPrintsJSON: false)
        )
        let common = ["call_id": "42", "method": "POST", "url": formatter.url]
        #expect(formatter.url.contains("s3cret") == false)
        #expect(formatter.requestRecord().metadata == common.merging(["request_bytes": "5"]) { $1 })
        let url = try #require(request.url)
        let response = try #require(HTTPURLResponse(url: url, statusCode: 201, httpVersion: nil, headerFields: [:]))
        #expect(
            formatter.responseRecord(response, data: Data(count: 3), duration: .milliseconds(2)).metadata
                == common.merging(["status": "201", "duration_ms": "2.0", "response_bytes": "3"]) { $1 }
        )
        let attributes = (0..<9).reduce(into: [String: String]()) { $0["k\($1)"] = "v\($1)" }
        let event = NetworkAgentEvent(source: "test", name: "many", attributes: attributes)
        var expected = common
        expected["event"] = "test.many"
        for (key, value) in attributes { expected["event." + key] = value }
        #expect(formatter.eventRecord(event).metadata == expected)
        #expect(formatter.curlRecord().metadata == common)
        let failure = formatter.failureRecord(NetworkAgentError(.timedOut, "late"), duration: .milliseconds(1))
        #expect(failure.metadata == common.merging(["duration_ms": "1.0", "error": "timed_out"]) { $1 })
    }
}
