import Foundation
import Testing

@testable import NetworkAgent

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The shortcuts of the sensitive-header mark on the auth plugin's path answer as the general code does.
struct SensitiveMarkTests {
    /// Field names to file or search for: the mark in several spellings, names of its length, non-ASCII names
    /// (the Kelvin sign lowercases to an ASCII `k` of another length), empty and padded ones.
    static let names = [
        "NetworkAgent-Sensitive-Headers", "networkagent-sensitive-headers", "NETWORKAGENT-SENSITIVE-HEADERS",
        "Networkagent-Sensitive-Headers", "NetworkAgent-Sensitive-Headerz", "NetworkAgent-Sensitive-Header",
        "NetworkAgent-Sensitive-Headers ", "Networ\u{212A}Agent-Sensitive-Headers",
        "networ\u{212A}agent-sensitive-headers", "NetworkAgent-Sensitive-Headérs", "Authorization", "authorization",
        "X-Api-Key", "Ñandu", "", " ", "\t x-b ",
        "A", "User-Agent", "Accept",
    ]

    /// `hasMark(in:)` finds a mark exactly when `HTTPFieldName.value(of:in:)` does, in dictionaries of one to three
    /// of the names above.
    @Test func theMarkIsFoundExactlyWhenTheGeneralSearchFindsIt() {
        for first in Self.names {
            for second in Self.names {
                for third in [nil, "Accept", "Networ\u{212A}agent-Sensitive-Headers"] {
                    var fields = [first: "1"]
                    fields[second] = "2"
                    if let third { fields[third] = "3" }
                    #expect(
                        URLRequest.hasMark(in: fields)
                            == (HTTPFieldName.value(of: URLRequest.sensitiveHeadersField, in: fields) != nil),
                        "\(fields.keys.sorted())"
                    )
                }
            }
        }
    }

    /// The mark's text for one name, worked out on the bytes for ASCII names, is what the general normalisation
    /// gives: `trimmingCharacters(in: .whitespaces).lowercased()`, `nil` when nothing is left.
    @Test func oneNamesMarkIsFoundationsNormalisation() {
        for name in Self.names + ["X-KEY\t\t", "  ", "a-B-c", "Z@[`{", "\u{00A0}x-nbsp", "ÑANDU "] {
            let expected = name.trimmingCharacters(in: .whitespaces).lowercased()
            #expect(
                SensitiveHeaderList.field(of: name) == (expected.isEmpty ? nil : expected),
                "\(name.debugDescription)"
            )
        }
    }

    /// A request that shares its storage with a copy changes alone: the copy keeps its fields and has no mark.
    @Test func aCopyOfTheRequestKeepsItsFields() throws {
        var request = URLRequest(url: try #require(URL(string: "http://example.com/")))
        request.allHTTPHeaderFields = ["Accept": "application/json", "User-Agent": "agent"]
        for isAbsent in [false, true] {
            var changed = request
            changed.setSensitiveHeaderField("Bearer t", for: "Authorization", isAbsent: isAbsent)
            #expect(request.allHTTPHeaderFields == ["Accept": "application/json", "User-Agent": "agent"])
            #expect(request.sensitiveHeaderNames.isEmpty)
            #expect(
                changed.allHTTPHeaderFields == [
                    "Accept": "application/json", "User-Agent": "agent", "Authorization": "Bearer t",
                    "Networkagent-Sensitive-Headers": "authorization",
                ]
            )
            #expect(changed.sensitiveHeaderNames == ["authorization"])
        }
    }

    /// A request without fields gets the field and the mark.
    @Test func aRequestWithoutFieldsGetsTheFieldAndTheMark() throws {
        var request = URLRequest(url: try #require(URL(string: "http://example.com/")))
        request.allHTTPHeaderFields = nil
        request.setSensitiveHeaderField("k", for: "X-Api-Key", isAbsent: true)
        #expect(request.allHTTPHeaderFields == ["X-Api-Key": "k", "Networkagent-Sensitive-Headers": "x-api-key"])
    }
}
