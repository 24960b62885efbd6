import Foundation
import NetworkAgent
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

    /// The one-pass byte check answers as the substring version it replaced (kept here as the reference), on the
    /// samples above and on random texts built from the characters that matter to it.
    @Test func theBytewiseNormalFormCheckAgreesWithTheSubstringOne() throws {
        let samples = [
            "http://127.0.0.1:8080/plain/data.json", "https://example.com/a/b?x=1&y=%20z", "http://example.com:80/a",
            "https://example.com:443/", "http://Example.com/a", "http://example.com", "http://example.com/a#f",
            "http://u:p@example.com/a", "http://example.com:08080/a", "http://localhost:65535/x?q=a+b;c=d",
            "http://a-b.c-d.e/x~y_z", "http://[::1]:8080/a", "http://example.com/a/./b",
            "http://xn--bcher-kva.example/a",
            "http://-a.com/", "http://a-.com/", "http://example.com:/a", "http://1.2.3.4:99999/a", "http://a..b/",
            "http:///a", "http://a.com:8080", "http://a.com:65536/", "http://a.com:1:2/", "http://.a/", "https://h/é",
            "http://a.com/x/.y", "http://a.com/.", "http://h:123456/",
        ]
        for sample in samples {
            #expect(CacheKey.isNormalized(sample) == Self.referenceIsNormalized(sample), "\(sample)")
        }
        let pieces = [
            "http://", "https://", "a", "z", "0", "9", "-", ".", ":", "/", "?", "#", "@", "%", "A", "xn--", "80", "443",
            "0", "65535", "~", "[", " ", "é",
        ]
        var random = SystemRandomNumberGenerator()
        for _ in 0..<4_000 {
            var text = Bool.random(using: &random) ? "http://" : "https://"
            for _ in 0..<Int.random(in: 0..<12, using: &random) {
                text += pieces[Int.random(in: 0..<pieces.count, using: &random)]
            }
            #expect(CacheKey.isNormalized(text) == Self.referenceIsNormalized(text), "\(text)")
        }
    }

    /// The check as it was before it became one pass over the bytes.
    static func referenceIsNormalized(_ text: String) -> Bool {
        func isLowercaseLetterOrDigit(_ byte: UInt8) -> Bool {
            (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z"))
                || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9"))
        }
        func isPlainURLCharacter(_ byte: UInt8) -> Bool {
            if isLowercaseLetterOrDigit(byte) || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z")) {
                return true
            }
            return "-.!$&'()*+,;=:/?%@_~".utf8.contains(byte)
        }
        var bytes = Substring(text).utf8[...]
        let isHTTPS: Bool
        if bytes.starts(with: "http://".utf8) {
            isHTTPS = false
            bytes = bytes.dropFirst(7)
        } else if bytes.starts(with: "https://".utf8) {
            isHTTPS = true
            bytes = bytes.dropFirst(8)
        } else {
            return false
        }
        guard let slash = bytes.firstIndex(of: UInt8(ascii: "/")) else { return false }
        let authority = bytes[..<slash]
        let hostEnd = authority.firstIndex(of: UInt8(ascii: ":")) ?? authority.endIndex
        let host = authority[..<hostEnd]
        for label in host.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false) {
            guard let first = label.first, let last = label.last, first != UInt8(ascii: "-"), last != UInt8(ascii: "-"),
                !label.starts(with: "xn--".utf8),
                label.allSatisfy({ isLowercaseLetterOrDigit($0) || $0 == UInt8(ascii: "-") })
            else { return false }
        }
        if hostEnd != authority.endIndex {
            let digits = authority[authority.index(after: hostEnd)...]
            guard let first = digits.first, first != UInt8(ascii: "0"), digits.count <= 5,
                digits.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
                let port = Int(String(decoding: digits, as: UTF8.self)), port <= 65_535, port != (isHTTPS ? 443 : 80)
            else { return false }
        }
        guard bytes[slash...].allSatisfy(isPlainURLCharacter) else { return false }
        var previous: UInt8 = 0
        for byte in text.utf8 {
            if previous == UInt8(ascii: "/") && byte == UInt8(ascii: ".") { return false }
            previous = byte
        }
        return true
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

    /// The primary key worked out when a key is made is the text the other parts give, and keys are equal and hash
    /// alike exactly when their parts are.
    @Test func thePrimaryKeyIsItsPartsAndLeavesEqualityToThem() {
        let parts: [(String, String, String, [String], String)] = [
            ("GET", "http://h/a", "", [], ""), ("GET", "http://h/a", "ab12", [], ""),
            ("HEAD", "http://h/a", "", [], ""),
            ("GET", "http://h/a", "", ["accept"], "v1"), ("GET", "http://h/b", "ab12", ["accept"], "v2"),
        ]
        let keys = parts.map { CacheKey(method: $0.0, url: $0.1, credential: $0.2, varyNames: $0.3, variant: $0.4) }
        for (key, part) in zip(keys, parts) {
            #expect(key.primary == (part.2.isEmpty ? "\(part.0) \(part.1)" : "\(part.0) \(part.1) #\(part.2)"))
            let again = CacheKey(method: part.0, url: part.1, credential: part.2, varyNames: part.3, variant: part.4)
            #expect(again == key)
            #expect(again.hashValue == key.hashValue)
        }
        for (index, key) in keys.enumerated() {
            for (other, otherKey) in keys.enumerated() where other != index { #expect(key != otherKey) }
        }
    }

    /// The credential fingerprint, found without collecting the values first, is the digest of every credential
    /// name's line in order, for each subset of the credential headers (a marked one included) and none.
    @Test func theCredentialFingerprintDigestsEveryNameInOrder() throws {
        let url = try #require(URL(string: "https://example.com/x"))
        let headers = [("Authorization", "Bearer t"), ("Proxy-Authorization", "Basic p"), ("Cookie", "c=1")]
        for mask in 0..<8 {
            var request = URLRequest(url: url)
            for (bit, header) in headers.enumerated() where mask & (1 << bit) != 0 {
                request.setValue(header.1, forHTTPHeaderField: header.0)
            }
            let names = CacheKey.credentialNames(of: request)
            let values = names.map { request.value(forHTTPHeaderField: $0) }
            var expected = ""
            if values.contains(where: { $0 != nil }) {
                var hasher = SHA256()
                hasher.update("networkagent.cache.credential.v1\n")
                for (name, value) in zip(names, values) {
                    hasher.update(value.map { "\(name):\($0)\n" } ?? "\(name)\u{0}\n")
                }
                expected = SHA256.hexString(hasher.finalize())
            }
            #expect(CacheKey(request: request)?.credential == expected, "\(mask)")
        }
    }

    /// A request timeout becomes the store deadline's duration as `Duration(timeInterval:)` makes it, whole numbers of
    /// seconds (the shortcut) and the rest alike.
    @Test func theDeadlineDurationIsTheTimeIntervalConversion() {
        let timeouts: [TimeInterval] = [
            0, 1, 60, 0.5, 59.999, -3, -0.25, 1e9, 9.1e18, 9.2e18, -9.2e18, 1e300, .infinity, -.infinity, .nan,
            .leastNonzeroMagnitude, 12_345.678_9,
        ]
        for timeout in timeouts {
            #expect(DiskCachePlugin.duration(of: timeout) == Duration(timeInterval: timeout), "\(timeout)")
        }
    }

    /// Credential fingerprints and keys pinned to the values the key had before its fingerprint was made cheaper
    /// (worked out by that code and by an independent SHA-256): an entry stored by an earlier version is still found
    /// under the same key. Marks in any case and spacing, repeated, naming absent headers, a non-ASCII one, and none.
    @Test func credentialFingerprintsKeepTheirEarlierValues() throws {
        let url = "https://example.com/x"
        let mark = "networkagent-sensitive-headers"
        let cases: [(headers: [String: String], credential: String)] = [
            ([:], ""),
            (["Accept": "text/plain"], ""),
            ([mark: "x-api-key"], ""),
            (
                ["Authorization": "Bearer t", mark: "authorization"],
                "fef08da79c92d69a25f2a432fa17247232a3c27ff89649062efee901a992eaa7"
            ),
            (
                ["Authorization": "Bearer t"],
                "fef08da79c92d69a25f2a432fa17247232a3c27ff89649062efee901a992eaa7"
            ),
            (
                [
                    "Authorization": "Bearer t", "Cookie": "c=1", "X-API-Key": "k1", "x-session": "s",
                    mark: "X-Api-Key , \t x-session,,AUTHORIZATION, cookie,x-api-key",
                ],
                "6567ebba8fcc36eef84cbcd6cbf8527b230abdd405d0cbc6d0f51f54034fefcb"
            ),
            (
                ["x-api-key": "k", mark: "X-Trace-Secret, X-Clé,X-API-KEY"],
                "e5645056eaf433f8b6d24defbc49cba8beb7cecac13bd88b08f5b3a13088f250"
            ),
        ]
        for (headers, credential) in cases {
            let key = try #require(CacheKey(request: try request(url, headers)))
            #expect(key.credential == credential, "\(headers)")
            #expect(key.primary == (credential.isEmpty ? "GET \(url)" : "GET \(url) #\(credential)"))
        }
        // Marks set through the public property, in mixed case, reach the same fingerprint.
        let fields = ["Authorization": "Bearer t", "Cookie": "c=1", "X-API-Key": "k1", "x-session": "s"]
        var marked = try request(url, fields)
        marked.sensitiveHeaderNames = ["X-Api-Key", "X-SESSION", "Cookie"]
        let key = try #require(CacheKey(request: marked))
        #expect(key.credential == "6567ebba8fcc36eef84cbcd6cbf8527b230abdd405d0cbc6d0f51f54034fefcb")
        #expect(key.identifier == "4b4ddbdddbac0055d0334f6034d54215b1eb19c86c500db5487b8184e4730fda")
    }

    /// The byte check that lets a request whose marks name only the three credential headers skip reading them into
    /// a set agrees with that reading: true exactly when every marked name, normalised, is one of the three.
    @Test func theMarksCheckAgreesWithTheMarkedNames() throws {
        let marks = [
            "", ",", " , \t,", "authorization", "Authorization", " COOKIE ,\tProxy-Authorization,,",
            "cookie,cookie", "x-api-key", "authorization, x-api-key", "authorizatio", "cookies", "auth orization",
            "Authorizatión", "Cookie,X-Clé", "cookie;", "\u{212A}ookie",
        ]
        let url = try #require(URL(string: "https://example.com/x"))
        for value in marks {
            var request = URLRequest(url: url)
            request.setValue(value, forHTTPHeaderField: "NetworkAgent-Sensitive-Headers")
            let names = CacheKey.credentialNames(of: request)
            let onlyThree = names == ["authorization", "proxy-authorization", "cookie"]
            #expect(CacheKey.marksOnlyCredentialHeaders(value) == onlyThree, "\(value)")
        }
    }
}
