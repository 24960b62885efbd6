import Foundation
import NetworkAgent
import NetworkAgentTestServer
import NetworkAgentTestSupport
import NetworkAgentTesting
import Testing

@testable import NetworkAgentDiskCache

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `no-cache="field"` (RFC 9111 §5.2.2.4, issue 27): the response is reused without the named fields until it is
/// validated.
@Suite struct QualifiedNoCacheTests: PolicyFixture {
    // MARK: §5.2.2.4 qualified no-cache

    @Test(arguments: [
        ("no-cache=\"X-Secret\", max-age=60", ["x-secret"]),
        ("no-cache=X-Secret, max-age=60", ["x-secret"]),
        ("max-age=60, no-cache=\"Set-Cookie, X-Secret\"", ["set-cookie", "x-secret"]),
        ("max-age=60, no-cache=\" X-A ,, x-b \"", ["x-a", "x-b"]),
    ])
    func aQualifiedNoCacheNamesFieldsAndAllowsReuse(_ field: String, _ names: [String]) {
        let control = CacheControl(field)
        #expect(!control.noCache)
        #expect(control.noCacheFields == Set(names))
        let stored = entry(["Date": httpDate(at(0)), "Cache-Control": field, "ETag": "\"a\""])
        #expect(policy.decide(stored, request: CacheControl(), now: at(10)) == .fresh)
    }

    @Test(arguments: ["no-cache, max-age=60", "no-cache=\"\", max-age=60", "no-cache=\"a\", no-cache, max-age=60"])
    func anUnqualifiedOrEmptyNoCacheValidatesEveryUse(_ field: String) {
        let stored = entry(["Date": httpDate(at(0)), "Cache-Control": field, "ETag": "\"a\""])
        #expect(policy.decide(stored, request: CacheControl(), now: at(10)) == .validate)
    }

    // MARK: §5.2.2.4 no-cache="field"

    /// A fresh hit leaves out the named field; after a successful validation the stored value is sent again.
    @Test(arguments: ["no-cache=\"X-Secret\", max-age=60", "max-age=60, no-cache=X-Secret"])
    func aQualifiedNoCacheIsReusedWithoutTheNamedField(_ directives: String) async throws {
        let cache = try CacheHarness { request, now in
            request.header("If-None-Match") == "\"a\""
                ? ServerResponse(status: 304, headers: [("Date", httpDate(now)), ("ETag", "\"a\"")])
                : .cached(
                    "shared",
                    at: now,
                    [("Cache-Control", directives), ("ETag", "\"a\""), ("X-Secret", "s1"), ("X-Public", "p")]
                )
        }
        let first = try await cache.send()
        #expect(first.header("X-Secret") == "s1")
        cache.clock.advance(by: .seconds(10))
        let hit = try await cache.send()
        #expect(hit.status == .hit)
        #expect(hit.body == "shared")
        #expect(hit.header("X-Secret") == nil)
        #expect(hit.header("X-Public") == "p")
        #expect(cache.requestCount == 1)
        cache.clock.advance(by: .seconds(60))
        let revalidated = try await cache.send()
        #expect(revalidated.status == .revalidated)
        #expect(revalidated.header("X-Secret") == "s1")
        #expect(cache.requestCount == 2)
    }
}
