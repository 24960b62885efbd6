import Foundation
import NetworkAgentTestServer
import NetworkAgentTestSupport
import NetworkAgentTesting
import Testing

@testable import NetworkAgentDiskCache

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A request's `Pragma: no-cache` (RFC 9111 §5.4): ignored when the request's `Cache-Control` is present and
/// understood, honoured when there is none or the cache understands none of its directives.
@Suite struct PragmaTests {
    @Test(arguments: [nil, "", "x-unknown", "community=\"x\""])
    func pragmaNoCacheCountsWithoutAnUnderstoodCacheControl(_ cacheControl: String?) {
        #expect(CacheControl(requestCacheControl: cacheControl, pragma: "no-cache").noCache)
    }

    @Test(arguments: ["max-age=5", "max-stale=10", "x-unknown, min-fresh=1", "no-store"])
    func pragmaIsIgnoredBesideAnUnderstoodCacheControl(_ cacheControl: String) {
        #expect(!CacheControl(requestCacheControl: cacheControl, pragma: "no-cache").noCache)
    }

    @Test func pragmaNoCacheBesideAnUnknownCacheControlValidatesOverTheWire() async throws {
        let cache = try CacheHarness { request, now in
            request.header("If-None-Match") == "\"p\""
                ? ServerResponse(status: 304, headers: [("Date", httpDate(now)), ("ETag", "\"p\"")])
                : .cached("pragma", at: now, [("Cache-Control", "max-age=600"), ("ETag", "\"p\"")])
        }
        _ = try await cache.send()
        let answer = try await cache.send(headers: ["Cache-Control": "x-unknown", "Pragma": "no-cache"])
        #expect(answer.status == .revalidated)
        #expect(cache.requestCount == 2)
        // Beside a Cache-Control the cache understands, Pragma is ignored: a fresh hit.
        #expect(try await cache.send(headers: ["Cache-Control": "max-stale=5", "Pragma": "no-cache"]).status == .hit)
        #expect(cache.requestCount == 2)
    }
}
