import Foundation
import Testing

@testable import NetworkAgent

/// `RequestBuilder.url(base:path:)` joins a plain base without `URLComponents`; the join must be the one
/// `URLComponents` gives, for plain bases and for those it leaves to `URLComponents`.
@Suite struct URLJoinTests {
    static let bases = [
        "http://h", "http://h/", "http://h/api", "http://h/api/", "http://h/api//", "https://example.com:8443/v1/",
        "http://127.0.0.1:8080", "http://h:80/a%20b/", "http://h/a;b=c/@x:y/", "http://h/~u/a+b,c!$'()*/",
        "http://h:0/", "http://h:08/x", "http://h:/x", "HTTP://h/x", "http://H/x", "http://user:pw@h/x",
        "http://h/v1?key=k", "http://h/v1#f", "http://h/v1?", "http://[::1]:8080/x", "https://pokeapi.co/api/v2",
        "http://xn--bcher-kva.example/x", "http://h/%C3%BC/", "ftp://h/x", "http://h./x", "http://-h-/x",
    ]
    static let paths = [
        "/items", "items", "//items/", "/a b/ü?#%", "/pokemon/25/", "x/y/z", "/", "//", "/%2e%2e", "/~user/a+b",
        "/a:b@c", "/a/./b", "/../x", "/a%2Fb", "/é/ø",
    ]

    @Test func theJoinWithoutURLComponentsAgreesWithIt() {
        var compared = 0
        for text in Self.bases {
            guard let base = URL(string: text) else { continue }
            for path in Self.paths {
                let joined = Result { try RequestBuilder.url(base: base, path: path) }
                let reference = Result { try RequestBuilder.urlByComponents(base: base, path: path) }
                switch (joined, reference) {
                case (.success(let url), .success(let expected)):
                    #expect(url.absoluteString == expected.absoluteString, "\(text) + \(path)")
                    #expect(url == expected, "\(text) + \(path)")
                case (.failure(let error), .failure(let expected)):
                    #expect((error as? NetworkAgentError)?.code == (expected as? NetworkAgentError)?.code)
                default:
                    Issue.record("\(text) + \(path): \(joined) against URLComponents' \(reference)")
                }
                compared += 1
            }
        }
        #expect(compared > 300)
    }

    /// A path of path characters is its own encoding; the shortcut must give what encoding each segment gives,
    /// dot segments refused alike.
    @Test func theUnencodedPathShortcutAgreesWithSegmentEncoding() throws {
        let base = try #require(URL(string: "https://api.example/v1"))
        let alphabet: [String] =
            ["a", "Z", "0", "-", "_", "~", "!", "$", "&", "'", "(", "*", "+", ",", ";", "=", ":", "@"]
            + [".", ".", "/", "/", "%", " ", "ü", "?", "#"]
        var random = SystemRandomNumberGenerator()
        var compared = 0
        for _ in 0..<4_000 {
            let length = Int.random(in: 0...8, using: &random)
            let path = (0..<length).map { _ in alphabet.randomElement(using: &random) ?? "a" }.joined()
            let fast = Result { try RequestBuilder.encodedPath(path, base: base) }
            let reference = Result { try RequestBuilder.encodedPathBySegments(path, base: base) }
            switch (fast, reference) {
            case (.success(let encoded), .success(let expected)):
                #expect(encoded == expected, "\(path.debugDescription)")
            case (.failure, .failure):
                break
            default:
                Issue.record("\(path.debugDescription): \(fast) against segment encoding's \(reference)")
            }
            compared += 1
        }
        #expect(compared == 4_000)
    }

    @Test func plainBasesAreRecognisedOnTheirText() {
        #expect(RequestBuilder.plainBase("http://127.0.0.1:8080") == "http://127.0.0.1:8080")
        #expect(RequestBuilder.plainBase("https://pokeapi.co/api/v2//") == "https://pokeapi.co/api/v2")
        for text in ["http://user@h/x", "http://h/v1?k=v", "http://h/x#f", "HTTP://h", "http://H/", "http://h:08/"] {
            #expect(RequestBuilder.plainBase(text) == nil, "\(text)")
        }
    }
}
