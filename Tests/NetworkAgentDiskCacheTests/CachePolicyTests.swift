import Foundation
import NetworkAgentTestServer
import Testing

@testable import NetworkAgentDiskCache

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The pure RFC 9111 rules, with hand-made entries and times.
@Suite struct CachePolicyTests {
    static let base = Date(timeIntervalSince1970: 1_700_000_000)
    let policy = CachePolicy(heuristicFraction: 0.1, maximumHeuristicLifetime: 86_400, offlineFallback: 0)

    func entry(
        status: Int = 200,
        _ headers: [String: String],
        requestAt: TimeInterval = 0,
        responseAt: TimeInterval = 0,
        varyNames: [String] = []
    ) -> CachedEntry {
        CachedEntry(
            key: CacheKey(method: "GET", url: "http://h/", credential: "", varyNames: varyNames, variant: ""),
            responseURL: URL(string: "http://h/")!,
            statusCode: status,
            headers: headers,
            body: Data(),
            requestDate: Self.base.addingTimeInterval(requestAt),
            responseDate: Self.base.addingTimeInterval(responseAt)
        )
    }

    func at(_ seconds: TimeInterval) -> Date { Self.base.addingTimeInterval(seconds) }

    // MARK: §4.2.3 age

    @Test func currentAgeFollowsTheRFCFormula() {
        // Sent at 0, received at 2 (response_delay 2), Date 10 s before receipt (apparent_age 10), Age 5:
        // corrected_age_value = 5 + 2 = 7, corrected_initial_age = max(10, 7) = 10, resident 30 s → 40.
        let stored = entry(["Date": httpDate(at(-8)), "Age": "5"], requestAt: 0, responseAt: 2)
        #expect(policy.currentAge(of: stored, now: at(32)) == 40)
        // A Date in the future gives no negative apparent age; the Age header dominates then.
        let future = entry(["Date": httpDate(at(100)), "Age": "3"], requestAt: 0, responseAt: 1)
        #expect(policy.currentAge(of: future, now: at(1)) == 4)
    }

    @Test func aMissingOrInvalidDateUsesTheResponseTime() {
        #expect(policy.currentAge(of: entry([:], responseAt: 0), now: at(12)) == 12)
        #expect(policy.currentAge(of: entry(["Date": "garbage"], responseAt: 0), now: at(12)) == 12)
    }

    // MARK: §4.2.1 lifetime

    @Test func maxAgeWinsOverExpires() {
        let stored = entry(["Cache-Control": "max-age=30", "Expires": httpDate(at(1_000)), "Date": httpDate(at(0))])
        #expect(policy.freshnessLifetime(of: stored) == 30)
    }

    @Test func sMaxAgeIsForSharedCachesOnly() {
        #expect(policy.freshnessLifetime(of: entry(["Cache-Control": "s-maxage=300"])) == 0)
    }

    @Test func expiresMinusDate() {
        let stored = entry(["Expires": httpDate(at(120)), "Date": httpDate(at(20))])
        #expect(policy.freshnessLifetime(of: stored) == 100)
        #expect(policy.freshnessLifetime(of: entry(["Expires": httpDate(at(-5)), "Date": httpDate(at(0))])) == 0)
    }

    @Test func heuristicIsTenPercentOfTheTimeSinceLastModification() {
        let stored = entry(["Date": httpDate(at(0)), "Last-Modified": httpDate(at(-5_000))])
        #expect(policy.freshnessLifetime(of: stored) == 500)
    }

    @Test func heuristicNeedsAHeuristicallyCacheableStatusOrPublic() {
        let headers = ["Date": httpDate(at(0)), "Last-Modified": httpDate(at(-5_000))]
        #expect(policy.freshnessLifetime(of: entry(status: 302, headers)) == 0)
        var publicHeaders = headers
        publicHeaders["Cache-Control"] = "public"
        #expect(policy.freshnessLifetime(of: entry(status: 302, publicHeaders)) == 500)
    }

    // MARK: HTTP dates (the core's parser, HTTPDateTests)

    @Test func theTestFormattersDatesAreRead() {
        let stored = entry(["Date": httpDate(at(0)), "Expires": httpDate(at(60))])
        #expect(policy.freshnessLifetime(of: stored) == 60)
    }

    /// RFC 9111 §4.2: a cache matches date names case-insensitively.
    @Test func datesAreMatchedCaseInsensitively() {
        let stored = entry(["Date": "tue, 14 nov 2023 22:13:20 gmt", "Expires": "TUE, 14 NOV 2023 22:14:20 GMT"])
        #expect(policy.freshnessLifetime(of: stored) == 60)
    }

    /// The cache's former parser placed two-digit years by the wall clock, as 20yy unless that was more than 50
    /// years ahead: wrong from 2050 on. Now they are placed relative to when the response arrived.
    @Test func aTwoDigitYearIsPlacedRelativeToTheResponseTime() {
        let in2060 = 2_840_140_800 - Self.base.timeIntervalSince1970  // 2060-01-01
        let stored = entry(
            ["Date": "Thursday, 01-Jan-60 00:00:00 GMT", "Expires": "Wednesday, 01-Jan-10 00:00:00 GMT"],
            requestAt: in2060,
            responseAt: in2060
        )
        // 2060-01-01 to 2110-01-01: fifty years with twelve leap days (2100 has none).
        #expect(policy.freshnessLifetime(of: stored) == TimeInterval((50 * 365 + 12) * 86_400))
    }

    @Test func lastModifiedValuesThatAreNoDatesOnlyMatchThemselves() {
        let stored = entry(["Last-Modified": "yesterday"])
        #expect(policy.notModified(["Last-Modified": "yesterday"], matches: stored))
        #expect(!policy.notModified(["Last-Modified": "today"], matches: stored))
    }

    // MARK: §3 storing

    @Test func whatMayBeStored() {
        let request = CacheControl()
        #expect(policy.mayStore(method: "GET", request: request, entry: entry(["Cache-Control": "max-age=5"])))
        #expect(policy.mayStore(method: "HEAD", request: request, entry: entry([:])))
        #expect(!policy.mayStore(method: "POST", request: request, entry: entry(["Cache-Control": "max-age=5"])))
        #expect(!policy.mayStore(method: "GET", request: request, entry: entry(["Cache-Control": "no-store"])))
        #expect(!policy.mayStore(method: "GET", request: CacheControl("no-store"), entry: entry([:])))
        #expect(
            !policy.mayStore(method: "GET", request: request, entry: entry(status: 206, ["Cache-Control": "max-age=5"]))
        )
        #expect(!policy.mayStore(method: "GET", request: request, entry: entry(status: 500, [:])))
        #expect(
            policy.mayStore(method: "GET", request: request, entry: entry(status: 500, ["Cache-Control": "max-age=5"]))
        )
        #expect(policy.mayStore(method: "GET", request: request, entry: entry(["Cache-Control": "private"])))
        #expect(!policy.mayStore(method: "GET", request: request, entry: entry([:], varyNames: ["*"])))
    }

    @Test func mustUnderstandOverridesNoStoreOnlyForUnderstoodStatusCodes() {
        let request = CacheControl()
        let understood = entry(["Cache-Control": "must-understand, no-store, max-age=5"])
        #expect(policy.mayStore(method: "GET", request: request, entry: understood))
        let unknown = entry(status: 299, ["Cache-Control": "must-understand, no-store, max-age=5"])
        #expect(!policy.mayStore(method: "GET", request: request, entry: unknown))
    }

    @Test func whatIsWorthStoring() {
        #expect(policy.isWorthStoring(entry(["Cache-Control": "max-age=5"])))
        #expect(policy.isWorthStoring(entry(["ETag": "\"x\""])))
        #expect(!policy.isWorthStoring(entry([:])))
        #expect(!policy.isWorthStoring(entry(["Cache-Control": "no-cache"])))
        #expect(policy.isWorthStoring(entry(["Cache-Control": "stale-if-error=60"])))
        var offline = policy
        offline.offlineFallback = 60
        #expect(offline.isWorthStoring(entry([:])))
    }

    // MARK: §4 decisions

    @Test func decisionsForAStoredResponse() {
        let stored = entry(["Cache-Control": "max-age=100", "ETag": "\"e\""])
        #expect(policy.decide(stored, request: CacheControl(), now: at(50)) == .fresh)
        #expect(policy.decide(stored, request: CacheControl(), now: at(150)) == .validate)
        #expect(policy.decide(stored, request: CacheControl("max-stale=60"), now: at(150)) == .staleAccepted)
        #expect(policy.decide(stored, request: CacheControl("max-stale=10"), now: at(150)) == .validate)
        #expect(policy.decide(stored, request: CacheControl("no-cache"), now: at(50)) == .validate)
        #expect(policy.decide(stored, request: CacheControl("max-age=40"), now: at(50)) == .validate)
        #expect(policy.decide(stored, request: CacheControl("min-fresh=60"), now: at(50)) == .validate)
        let noValidator = entry(["Cache-Control": "max-age=100"])
        #expect(policy.decide(noValidator, request: CacheControl(), now: at(150)) == .fetch)
    }

    @Test func staleWhileRevalidateAndMustRevalidate() {
        let swr = entry(["Cache-Control": "max-age=10, stale-while-revalidate=30"])
        #expect(policy.decide(swr, request: CacheControl(), now: at(35)) == .staleWhileRevalidate)
        #expect(policy.decide(swr, request: CacheControl(), now: at(45)) == .fetch)
        #expect(policy.decide(swr, request: CacheControl("no-cache"), now: at(35)) == .fetch)
        let strict = entry(["Cache-Control": "max-age=10, must-revalidate, stale-while-revalidate=30", "ETag": "\"s\""])
        #expect(policy.decide(strict, request: CacheControl("max-stale"), now: at(20)) == .validate)
    }

    @Test func servingOnErrors() {
        let stored = entry(["Cache-Control": "max-age=10, stale-if-error=60"])
        #expect(policy.mayServeOnError(stored, request: CacheControl(), now: at(70)))
        #expect(!policy.mayServeOnError(stored, request: CacheControl(), now: at(71)))
        #expect(policy.mayServeOnError(stored, request: CacheControl("stale-if-error=600"), now: at(71)))
        let plain = entry(["Cache-Control": "max-age=10"])
        #expect(!policy.mayServeOnError(plain, request: CacheControl(), now: at(20)))
        var offline = policy
        offline.offlineFallback = 3_600
        #expect(offline.mayServeOnError(plain, request: CacheControl(), now: at(20)))
        #expect(
            !offline.mayServeOnError(
                entry(["Cache-Control": "max-age=10, must-revalidate"]),
                request: CacheControl(),
                now: at(20)
            )
        )
    }

    // MARK: §4.3 validation

    @Test func conditionalRequestsCarryTheStoredValidatorsVerbatim() {
        let stored = entry(["ETag": "W/\"weak\"", "Last-Modified": "Sun, 06 Nov 1994 08:49:37 GMT"])
        let conditional = policy.conditionalRequest(URLRequest(url: URL(string: "http://h/")!), for: stored)
        #expect(conditional.value(forHTTPHeaderField: "If-None-Match") == "W/\"weak\"")
        #expect(conditional.value(forHTTPHeaderField: "If-Modified-Since") == "Sun, 06 Nov 1994 08:49:37 GMT")
    }

    @Test func which304sApply() {
        let stored = entry(["ETag": "\"a\"", "Last-Modified": "Sun, 06 Nov 1994 08:49:37 GMT"])
        #expect(policy.notModified(["ETag": "\"a\""], matches: stored))
        #expect(policy.notModified(["etag": "W/\"a\""], matches: stored))
        #expect(!policy.notModified(["ETag": "\"b\""], matches: stored))
        #expect(policy.notModified(["Last-Modified": "Sunday, 06-Nov-94 08:49:37 GMT"], matches: stored))
        #expect(policy.notModified([:], matches: stored))
    }

    @Test func merging304HeadersKeepsTheBodyDescription() {
        let stored = entry([
            "Content-Length": "8", "Content-Encoding": "gzip", "Content-Type": "text/plain", "X-A": "1", "Age": "50",
        ])
        let merged = policy.merging(
            ["Content-Length": "0", "content-encoding": "identity", "x-a": "2", "Connection": "close"],
            into: stored,
            requestDate: at(100),
            responseDate: at(101)
        )
        #expect(merged.header("Content-Length") == "8")
        #expect(merged.header("Content-Encoding") == "gzip")
        #expect(merged.header("X-A") == "2")
        #expect(merged.header("Connection") == nil)
        #expect(merged.header("Age") == nil)
        #expect(merged.headers.count == 4)
        #expect(merged.responseDate == at(101))
    }

    @Test func hopByHopHeadersAreNotStored() {
        let stored = CachePolicy.storableHeaders(
            ["Connection": "close, X-Hop", "X-Hop": "1", "Keep-Alive": "timeout=5", "ETag": "\"e\"", "X-Cache": "hit"],
            excluding: "x-cache"
        )
        #expect(stored == ["ETag": "\"e\""])
        // The excluded name is compared without ASCII case, as field names are; nothing is excluded without one.
        let kept = ["ETag": "\"e\"", "x-networkagent-CACHE": "miss"]
        #expect(CachePolicy.storableHeaders(kept, excluding: "X-NetworkAgent-Cache") == ["ETag": "\"e\""])
        #expect(CachePolicy.storableHeaders(kept, excluding: nil) == kept)
    }

    /// The name checks compare ASCII names without lowercasing them; any other name is lowercased as before (the
    /// Kelvin sign lowercases to `k`, so `\u{212A}eep-Alive` is `keep-alive`).
    @Test func unstorableNamesAreThoseWhoseLowercaseIsListed() {
        let names = [
            "Connection", "CONNECTION", "keep-alive", "Keep-Alive", "Proxy-Connection", "TE", "te", "Transfer-Encoding",
            "Upgrade", "Proxy-Authenticate", "proxy-authentication-info", "Proxy-Authorization", "ETag", "Tee",
            "Connections", "Content-Length", "X-Hop", "\u{212A}eep-Alive", "\u{212A}", "k", "K", "X-K", "x-\u{212A}",
            "Prox\u{0130}", "", "Übergabe",
        ]
        let lists: [[String]] = [
            [], ["keep-alive"], ["x-hop", "k"], CachePolicy.connectionNames("close, X-\u{212A}, Tee"),
        ]
        for name in names {
            #expect(
                CachePolicy.isUnstorable(name) == CachePolicy.unstorableHeaders.contains(name.lowercased()),
                "\(name)"
            )
            for list in lists {
                #expect(
                    CachePolicy.isListed(name, in: list) == Set(list).contains(name.lowercased()),
                    "\(name) \(list)"
                )
            }
        }
        #expect(CachePolicy.connectionNames(nil).isEmpty)
        #expect(CachePolicy.connectionNames("").isEmpty)
        #expect(Set(CachePolicy.connectionNames(" close ,X-Hop,,x-hop")) == ["close", "x-hop"])
        for value in ["keep-alive", "Keep-Alive", "KEEP-ALIVE", "close", "Close", " close", "keep-alive, Upgrade"] {
            let lowercased = Set(
                value.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
            )
            #expect(Set(CachePolicy.connectionNames(value)) == lowercased, "\(value)")
        }
    }

    /// The one-pass copy of a response's storable fields equals the two steps it replaces (copy every field, then
    /// `storableHeaders`), whatever the `Connection` field lists and whatever the status field is called.
    @Test func storableFieldsOfAResponseAreTheStorableHeadersOfItsFields() throws {
        let url = try #require(URL(string: "https://example.com/a"))
        let responses: [[String: String]] = [
            [
                "Server": "nginx", "Date": "Mon, 01 Jan 2024 00:00:00 GMT", "Content-Type": "application/json",
                "Content-Length": "1024", "Connection": "keep-alive", "Cache-Control": "max-age=3600",
                "X-NetworkAgent-Cache": "miss", "ETag": "\"e\"",
            ],
            [
                "Connection": "close, X-Hop, x-other", "X-Hop": "1", "X-Other": "2", "Keep-Alive": "timeout=5",
                "Transfer-Encoding": "chunked", "TE": "trailers", "Upgrade": "h2c", "Proxy-Authenticate": "Basic",
                "Proxy-Authentication-Info": "a", "Proxy-Connection": "close", "ETag": "\"e\"",
                "x-networkagent-cache": "hit",
            ],
            ["ETag": "\"e\"", "Vary": "Accept", "X-K": "1", "Connection": "X-\u{212A}"],
            ["ETag": "\"e\""],
            [:],
        ]
        for fields in responses {
            let response = try #require(
                HTTPURLResponse(url: url, statusCode: 200, httpVersion: "HTTP/1.1", headerFields: fields)
            )
            // The copy is Foundation's fields, cast as `AnyHashable` and `Any` would be.
            var cast: [String: String] = [:]
            for case (let name as String, let value as String) in response.allHeaderFields { cast[name] = value }
            #expect(DiskCacheExchange.headerFields(of: response) == cast)
            for excluded in ["X-NetworkAgent-Cache", "x-networkagent-CACHE", "ETag", nil] {
                let twoSteps = CachePolicy.storableHeaders(
                    DiskCacheExchange.headerFields(of: response),
                    excluding: excluded
                )
                #expect(
                    DiskCacheExchange.storableHeaderFields(of: response, excluding: excluded) == twoSteps,
                    "\(fields) excluding \(excluded ?? "nothing")"
                )
            }
        }
    }
}
