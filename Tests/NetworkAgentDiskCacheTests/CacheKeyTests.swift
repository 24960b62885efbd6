import Foundation
import Testing

@testable import NetworkAgentDiskCache

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Cache keys: URL normalisation, credential fingerprints and variants.
@Suite struct CacheKeyTests {
    func request(_ url: String, _ headers: [String: String] = [:], method: String = "GET") throws -> URLRequest {
        var request = URLRequest(url: try #require(URL(string: url)))
        request.httpMethod = method
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        return request
    }

    /// The byte check that skips `URLComponents` for a URL already in normal form answers only where the
    /// `URLComponents` normalisation would return the text unchanged (issue 29).
    @Test func theNormalisedFastPathAgreesWithURLComponents() throws {
        let samples = [
            "http://127.0.0.1:8080/plain/data.json", "http://127.0.0.1:8080/cached/data.json?n=12",
            "https://example.com/a/b?x=1&y=%20z", "http://example.com:80/a", "https://example.com:443/",
            "http://Example.com/a", "HTTP://example.com/a", "http://example.com", "http://example.com/a#f",
            "http://u:p@example.com/a", "http://example.com:08080/a", "http://localhost:65535/x?q=a+b;c=d",
            "http://a-b.c-d.e/x~y_z", "http://[::1]:8080/a", "http://example.com/a/./b", "http://example.com/%7Efoo",
            "http://xn--bcher-kva.example/a", "http://-a.com/", "http://example.com:/a", "http://1.2.3.4:99999/a",
            "http://example.com/a?b=c@d:e/f?g", "ftp://example.com/a", "https://example.com:8443/p?q",
        ]
        var fast = 0
        for sample in samples {
            let url = try #require(URL(string: sample))
            let expected = CacheKey.normalizedURLByComponents(url)
            #expect(CacheKey.normalizedURL(url) == expected, "\(sample)")
            if CacheKey.isNormalized(url.absoluteString) {
                fast += 1
                #expect(expected == url.absoluteString, "\(sample)")
            }
        }
        #expect(fast == 8)
    }

    @Test func urlsAreNormalised() throws {
        let key = try #require(CacheKey(request: try request("HTTP://Example.COM:80?b=2&a=1#frag")))
        #expect(key.url == "http://example.com/?b=2&a=1")
        #expect(key.method == "GET")
        #expect(CacheKey.normalizedURL(try #require(URL(string: "https://h:443/p"))) == "https://h/p")
        #expect(CacheKey.normalizedURL(try #require(URL(string: "https://h:8443/p"))) == "https://h:8443/p")
        #expect(CacheKey(request: try request("ftp://h/file")) == nil)
    }

    @Test func credentialsGiveDifferentPrimaryKeysWithoutRevealingThem() throws {
        let anonymous = try #require(CacheKey(request: try request("http://h/me")))
        let alice = try #require(CacheKey(request: try request("http://h/me", ["Authorization": "Bearer alice"])))
        let bob = try #require(CacheKey(request: try request("http://h/me", ["Authorization": "Bearer bob"])))
        let cookie = try #require(CacheKey(request: try request("http://h/me", ["Cookie": "Bearer alice"])))
        #expect(anonymous.credential.isEmpty)
        #expect(Set([anonymous.primary, alice.primary, bob.primary, cookie.primary]).count == 4)
        #expect(alice.credential.count == 64)
        #expect(!alice.primary.contains("alice"))
        let aliceAgain = try #require(CacheKey(request: try request("http://h/me", ["authorization": "Bearer alice"])))
        #expect(aliceAgain == alice)
    }

    @Test func variantsDependOnlyOnTheVaryingHeaders() throws {
        let names = ["Accept-Language", "accept-encoding"]
        let english = try #require(
            CacheKey(request: try request("http://h/", ["Accept-Language": "en", "X-Other": "1"]), varyNames: names)
        )
        let englishToo = try #require(
            CacheKey(request: try request("http://h/", ["Accept-Language": "en"]), varyNames: names)
        )
        let french = try #require(
            CacheKey(request: try request("http://h/", ["Accept-Language": "fr"]), varyNames: names)
        )
        let empty = try #require(CacheKey(request: try request("http://h/", ["Accept-Language": ""]), varyNames: names))
        let absent = try #require(CacheKey(request: try request("http://h/"), varyNames: names))
        #expect(english.varyNames == ["accept-encoding", "accept-language"])
        #expect(english == englishToo)
        #expect(english.primary == french.primary)
        #expect(Set([english.variant, french.variant, empty.variant, absent.variant]).count == 4)
        #expect(english.identifier != french.identifier)
    }

    @Test func varyFieldsAreSplitAndNormalised() {
        #expect(
            CacheKey.varyNames(fromField: " Accept-Encoding ,accept-language, ACCEPT-ENCODING") == [
                "accept-encoding", "accept-language",
            ]
        )
        #expect(CacheKey.varyNames(fromField: "*") == ["*"])
        #expect(CacheKey.varyNames(fromField: nil).isEmpty)
    }
}
