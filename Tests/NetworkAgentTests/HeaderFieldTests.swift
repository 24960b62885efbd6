import Foundation
import Testing

@testable import NetworkAgent

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The core's header-field access for hot paths (`headerField`, `setHeaderField`) gives Foundation's results
/// (issue 29): the same fields, under the same spelling, after any sequence of writes; the same reads.
@Suite struct HeaderFieldTests {
    /// Writes applied in turn to two requests, one through Foundation, one through the core.
    static let writes: [(value: String?, name: String)] = [
        ("1", "Accept"), ("2", "accept"), ("3", "X-API-Key"), (nil, "x-api-key"), ("4", "user-agent"),
        (nil, "nothing"), ("", "Empty"), ("5", "X-FOO"), ("6", "NetworkAgent-Sensitive-Headers"),
        ("7", "content-md5"), ("8", "x_y.z"), ("9", "ñandu-x"), (nil, "NETWORKAGENT-SENSITIVE-HEADERS"),
        (nil, "x-foo"), ("10", "WWW-Authenticate"), (nil, "accept"), (nil, "User-Agent"), (nil, "empty"),
    ]

    @Test func writesFileFieldsAsFoundationDoes() throws {
        var foundation = URLRequest(url: try #require(URL(string: "http://example.com/")))
        foundation.allHTTPHeaderFields = ["x-foo": "0"]  // a name Foundation would not have spelled so
        var core = foundation
        for write in Self.writes {
            foundation.setValue(write.value, forHTTPHeaderField: write.name)
            core.setHeaderField(write.value, for: write.name)
            #expect(core.allHTTPHeaderFields == foundation.allHTTPHeaderFields, "after \(write)")
        }
    }

    @Test func readsFindFieldsAsFoundationDoes() throws {
        var request = URLRequest(url: try #require(URL(string: "http://example.com/")))
        request.allHTTPHeaderFields = ["x-foo": "1", "Accept": "2", "Ñandu": "3", "Empty": ""]
        for name in ["x-foo", "X-FOO", "accept", "ACCEPT", "ñandu", "ÑANDU", "empty", "missing", "x-fo", ""] {
            #expect(request.headerField(name) == request.value(forHTTPHeaderField: name), "\(name)")
        }
        #expect(URLRequest(url: try #require(URL(string: "http://example.com/"))).headerField("Accept") == nil)
    }
}
