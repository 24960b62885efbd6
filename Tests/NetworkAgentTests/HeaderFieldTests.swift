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

    @Test func addingAFieldIfAbsentIsSettingItWhenFoundationFindsNone() throws {
        var foundation = URLRequest(url: try #require(URL(string: "http://example.com/")))
        foundation.allHTTPHeaderFields = ["x-foo": "0"]
        var core = foundation
        for write in Self.writes {
            let value = write.value ?? "added"
            if foundation.value(forHTTPHeaderField: write.name) == nil {
                foundation.setValue(value, forHTTPHeaderField: write.name)
            }
            core.addHeaderFieldIfAbsent(value, for: write.name)
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

    /// A response's `headerField` (the fields a timed response was made from, read without Foundation) answers as
    /// `value(forHTTPHeaderField:)` does, for heads whose names Foundation respells (capitalized, `x-` kept,
    /// `WWW-Authenticate`), collapses (two spellings of one name) or that are not ASCII, and for responses without
    /// timings (Foundation's own look-up).
    @Test func responseReadsFindFieldsAsFoundationDoes() throws {
        let url = try #require(URL(string: "http://example.com/"))
        let heads: [[String: String]] = [
            [
                "Date": "d", "content-type": "text/plain", "CONTENT-LENGTH": "3", "x-request-id": "r",
                "www-authenticate": "Bearer", "etag": "\"e\"", "Content-Encoding": "gzip",
            ],
            ["content-encoding": "gzip", "Content-Encoding": "br"],
            ["x-foo": "1", "X-Foo": "2", "X-FOO": "3", "Accept": "4"],
            // The Kelvin sign lowercases to an ASCII `k` (and a Swift string of it equals one with `K`: no key beside it).
            ["\u{212A}eep-Alive": "kelvin", "Accept": "ascii"],
            ["\u{212A}eep-Alive": "kelvin", "Ñandu": "n"],
            ["": "empty", "Empty": ""],
            [:],
        ]
        let names = [
            "Content-Encoding", "content-encoding", "CONTENT-TYPE", "Content-Length", "x-request-id", "X-Request-Id",
            "WWW-Authenticate", "www-authenticate", "ETag", "x-foo", "X-FOO", "keep-alive", "KEEP-ALIVE", "ñandu",
            "Ñandu", "empty", "", "missing",
        ]
        let timings = HTTPTransferTimings(total: .milliseconds(1))
        for head in heads {
            for timed in [timings, nil] {
                let response = try #require(
                    HTTPURLResponse.withTransferTimings(
                        timed,
                        url: url,
                        statusCode: 200,
                        httpVersion: "HTTP/1.1",
                        headerFields: head
                    )
                )
                for name in names {
                    #expect(
                        response.headerField(name) == response.value(forHTTPHeaderField: name),
                        "\(head) \(name) timed: \(timed != nil)"
                    )
                }
            }
        }
        // The shortcut decides a plain head without asking Foundation: found and absent names alike.
        let plain = ["Content-Type": "text/plain", "content-length": "3", "x-id": "i"]
        #expect(HTTPURLResponse.uniqueASCIIField("CONTENT-LENGTH", in: plain) == .some("3"))
        #expect(HTTPURLResponse.uniqueASCIIField("Content-Encoding", in: plain) == .some(nil))
        #expect(HTTPURLResponse.uniqueASCIIField("X-ID", in: ["x-id": "1", "X-Id": "2"]) == nil)
    }

    /// Names compared by the byte fast path and by lowercasing: ASCII and not, equal and not, of other lengths (the
    /// Kelvin sign lowercases to an ASCII `k`).
    @Test func namesCompareAsLowercasedNamesDo() {
        let names = [
            "accept", "Accept", "ACCEPT", "accepT", "accept ", "acce", "x-api-key", "X-Api-Key", "x_api_key",
            "@", "`", "[", "{", "k", "K", "\u{212A}", "\u{212A}-id", "k-id", "K-ID", "ñandu", "ÑANDU", "Ñandu-x", "",
        ]
        for lhs in names {
            for rhs in names {
                #expect(HTTPFieldName.equal(lhs, rhs) == (lhs.lowercased() == rhs.lowercased()), "\(lhs) \(rhs)")
            }
        }
    }

    /// The spelling a new field is filed under is Foundation's `capitalized`, for names already spelled so (which
    /// skip the look-up) and for others.
    @Test func canonicalSpellingIsCapitalized() {
        let names = [
            "Authorization", "Accept-Encoding", "X-Api-Key", "A", "A-B", "Content-Md5", "authorization",
            "AUTHORIZATION",
            "X-API-Key", "WWW-Authenticate", "A-", "-A", "Ab--Cd", "x-b3-id", "X-B3x", "Ñandu", "x_y.z", "Ab Cd", "",
        ]
        for name in names {
            #expect(HTTPFieldName.canonical(name) == name.capitalized, "\(name)")
        }
    }

    /// `setSensitiveHeaderField` (one change of the fields) leaves exactly what `setHeaderField` and then
    /// `sensitiveHeaderNames.insert` leave, whatever mark and fields the request had.
    @Test func settingASensitiveFieldEqualsSettingThenMarking() throws {
        let marks: [String?] = [nil, "authorization", "x-b, x-a", " X-A ,,\tx-b,", "x-api-key", "ñandu", ""]
        let names = ["Authorization", "authorization", "X-API-Key", " x-padded\t", "Ñandu", "x-a"]
        for mark in marks {
            for name in names {
                var separate = URLRequest(url: try #require(URL(string: "http://example.com/")))
                separate.allHTTPHeaderFields = ["AUTHORIZATION": "old", "x-api-key": "k"]
                if let mark { separate.allHTTPHeaderFields?["networkagent-SENSITIVE-headers"] = mark }
                var combined = separate
                separate.setHeaderField("secret", for: name)
                separate.sensitiveHeaderNames.insert(name)
                combined.setSensitiveHeaderField("secret", for: name)
                #expect(
                    combined.allHTTPHeaderFields == separate.allHTTPHeaderFields,
                    "\(String(describing: mark)) \(name)"
                )
            }
        }
    }

    /// Told that the field is absent (the auth plugin has just looked), `setSensitiveHeaderField` files it without
    /// searching and leaves what the search would have left, whatever mark and other fields the request had.
    @Test func settingAnAbsentSensitiveFieldWithoutTheSearchEqualsTheSearch() throws {
        let marks: [String?] = [nil, "authorization", "x-b, x-a", " X-A ,,\tx-b,", "x-api-key", "ñandu", ""]
        let names = ["Authorization", "authorization", "X-API-Key", "Ñandu", "x-a", "NetworkAgent-Other"]
        let others: [[String: String]] = [[:], ["User-Agent": "u", "accept": "*/*"], ["X-Authorization": "near"]]
        for mark in marks {
            for name in names {
                for other in others {
                    var searched = URLRequest(url: try #require(URL(string: "http://example.com/")))
                    searched.allHTTPHeaderFields = other
                    if let mark { searched.allHTTPHeaderFields?["networkagent-SENSITIVE-headers"] = mark }
                    try #require(searched.headerField(name) == nil)
                    var told = searched
                    searched.setSensitiveHeaderField("secret", for: name)
                    told.setSensitiveHeaderField("secret", for: name, isAbsent: true)
                    #expect(
                        told.allHTTPHeaderFields == searched.allHTTPHeaderFields,
                        "\(String(describing: mark)) \(name)"
                    )
                }
            }
        }
    }

    /// The mark's names are normalised as `trimmingCharacters(in: .whitespaces).lowercased()` does, ASCII or not.
    @Test func sensitiveNamesNormaliseAsFoundationDoes() {
        for name in ["X-Key", " x-key", "x-key\t", " \t ", "", "ÑANDU ", "\u{00A0}x-nbsp\u{2003}", "K\u{212A}"] {
            #expect(
                SensitiveHeaderList.normalized(name[...]) == name.trimmingCharacters(in: .whitespaces).lowercased(),
                "\(name.debugDescription)"
            )
        }
    }

    /// The byte fast path of `Origin.isLoopback` answers as the rule says.
    @Test func loopbackHostsAreRecognised() throws {
        let loopback = [
            "localhost", "api.localhost", ".localhost", "127.0.0.1", "127.1.2.255", "127.000.0.1", "[::1]", "::1",
            "127.+1.0.0",
        ]
        let other = [
            "localhost.example", "xlocalhost", "128.0.0.1", "127.0.0", "127.0.0.1.2", "127.0.0.256", "127..0.1",
            "[::2]", "example.com", "127.0.0.-1", "", "[", "[]", "ñ.localhost.example",
        ]
        for host in loopback {
            guard let url = URL(string: "http://\(host)/"), let origin = Origin(url) else { continue }  // no host
            #expect(origin.isLoopback, "\(host)")
        }
        for host in other {
            guard let url = URL(string: "http://\(host)/"), let origin = Origin(url) else { continue }
            #expect(!origin.isLoopback, "\(host)")
        }
    }
}
