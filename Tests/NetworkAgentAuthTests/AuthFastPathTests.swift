import Foundation
import Testing

@testable import NetworkAgent
@testable import NetworkAgentAuth

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The auth plugin's one pass over the field names, and its filing of a prepared `Authorization` value, against the
/// core's look-up, mark search and `setSensitiveHeaderField`.
@Suite struct AuthFastPathTests {
    static let names = [
        "Accept", "User-Agent", "Authorization", "authorization", "AUTHORIZATION", "Authorizatio", "Authorizations",
        "X-Authorization", "NetworkAgent-Sensitive-Headers", "networkagent-sensitive-headers",
        "Networkagent-Sensitive-Headers", "NetworkAgent-Sensitive-Header", "NetworkAgent-Sensitive-Headerz",
        "Authorizatioñ", "\u{212A}ey", "Content-Type", "",
    ]

    /// Every set of up to three names: the scan answers as the core does, or `nil` when a name is not ASCII.
    @Test func theScanAgreesWithTheCoresSearches() {
        var sets: [[String]] = [[]]
        for first in Self.names.indices {
            sets.append([Self.names[first]])
            for second in Self.names.indices where second > first {
                sets.append([Self.names[first], Self.names[second]])
                for third in Self.names.indices where third > second {
                    sets.append([Self.names[first], Self.names[second], Self.names[third]])
                }
            }
        }
        for names in sets {
            let fields = Dictionary(names.map { ($0, "v") }, uniquingKeysWith: { first, _ in first })
            let ascii = names.allSatisfy { $0.utf8.allSatisfy { $0 < 0x80 } }
            guard let scan = AuthorizationFieldScan(fields) else {
                #expect(!ascii, "\(names)")
                continue
            }
            #expect(ascii, "\(names)")
            #expect(scan.hasAuthorization == (HTTPFieldName.value(of: "Authorization", in: fields) != nil), "\(names)")
            #expect(scan.hasMark == URLRequest.hasMark(in: fields), "\(names)")
        }
    }

    /// The mark the plugin files is the one the core's function makes for `Authorization`.
    @Test func theRememberedMarkIsTheCoresMark() throws {
        let mark = try #require(AuthPlugin.authorizationMark)
        var request = URLRequest(url: URL(fileURLWithPath: "/"))
        request.setSensitiveHeaderField("x", for: "Authorization", isAbsent: true)
        #expect(request.allHTTPHeaderFields?[mark.name] == mark.value)
        #expect(request.sensitiveHeaderNames == ["authorization"])
    }

    /// The request the plugin hands on carries exactly the fields `Credential.authorizing(_:)` gives (the core's
    /// filing), for requests with and without fields, marks of their own, and names that are not ASCII.
    @Test(arguments: [
        Credential.bearer("tok-1"), .basic(username: "ann", password: "pä ss"), .header(name: "X-Key", value: "k"),
    ])
    func theFiledFieldsAreTheCoresFields(credential: Credential) async throws {
        let fieldSets: [[String: String]?] = [
            nil, [:], ["Accept": "application/json", "User-Agent": "agent"],
            ["Accept": "a", "NetworkAgent-Sensitive-Headers": "x-secret"],
            ["networkagent-sensitive-headers": "cookie, x-secret", "X-Secret": "s"],
            ["Accept": "a", "\u{212A}ey": "kelvin"], ["X-Authorizatio": "a", "Content-Type": "text/plain"],
        ]
        let endpoint = AuthEndpoint(baseURL: try #require(URL(string: "https://api.example.com")))
        let url = try #require(URL(string: "https://api.example.com/items"))
        for (fixed, plugin) in [
            (true, AuthPlugin.auth(credential)), (false, AuthPlugin { credential }),
        ] {
            for fields in fieldSets {
                var request = URLRequest(url: url)
                request.allHTTPHeaderFields = fields
                let expected = try credential.authorizing(request)
                let authorized = try await plugin.onRequest(request, endpoint: endpoint)
                #expect(
                    authorized.allHTTPHeaderFields == expected.allHTTPHeaderFields,
                    "\(fixed) \(String(describing: fields))"
                )
                #expect(authorized.sensitiveHeaderNames == expected.sensitiveHeaderNames)
            }
        }
    }

    /// A fixed credential that cannot be sent still fails each request as it did, and one that is already there in
    /// another case is kept.
    @Test func aFixedCredentialIsCheckedAndGivesWay() async throws {
        let endpoint = AuthEndpoint(baseURL: try #require(URL(string: "https://api.example.com")))
        let request = URLRequest(url: try #require(URL(string: "https://api.example.com/items")))
        for _ in 0..<2 {
            await #expect(throws: AuthPlugin.Error.self) {
                _ = try await AuthPlugin.auth(.bearer("a\nb")).onRequest(request, endpoint: endpoint)
            }
        }
        var carrying = request
        carrying.setValue("Bearer mine", forHTTPHeaderField: "authorization")
        let kept = try await AuthPlugin.auth(.bearer("theirs")).onRequest(carrying, endpoint: endpoint)
        #expect(kept.value(forHTTPHeaderField: "Authorization") == "Bearer mine")
        #expect(kept.sensitiveHeaderNames.isEmpty)
    }

    @Test func preparedValuesAreTheCredentialsOwn() throws {
        #expect(PreparedCredential(.bearer("t")).authorizationValue == "Bearer t")
        let basic = PreparedCredential(.basic(username: "u", password: "p"))
        #expect(basic.authorizationValue == "Basic " + Data("u:p".utf8).base64EncodedString())
        #expect(PreparedCredential(.basic(username: "u:v", password: "p")).authorizationValue == nil)
        #expect(PreparedCredential(.bearer("a\rb")).authorizationValue == nil)
        #expect(PreparedCredential(.header(name: "X", value: "v")).authorizationValue == nil)
        #expect(PreparedCredential(.query(name: "k", value: "v")).authorizationValue == nil)
    }
}
