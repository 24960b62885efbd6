import Foundation
import NetworkAgent
import NetworkAgentDiskCache
import NetworkAgentTestServer
import NetworkAgentTestSupport
import NetworkAgentTesting
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Response freshness over the wire (RFC 9111 §4.2): what is answered without the network, and when it stops being.
@Suite struct DiskCacheFreshnessTests {
    @Test func aFreshMaxAgeResponseIsAnsweredWithZeroRequests() async throws {
        let cache = try CacheHarness { _, now in .cached("v1", at: now, [("Cache-Control", "max-age=60")]) }
        let first = try await cache.send()
        #expect(first.status == .miss)
        cache.clock.advance(by: .seconds(10))
        let second = try await cache.send()
        #expect(cache.requestCount == 1)
        #expect(second.status == .hit)
        #expect(second.body == "v1")
        #expect(second.response.statusCode == 200)
        #expect(second.header("Age") == "10")
        #expect(second.header("Content-Type") == "text/plain; charset=utf-8")
    }

    @Test func aResponsePastItsMaxAgeWithoutValidatorIsFetchedAgain() async throws {
        let cache = try CacheHarness { _, now in
            .cached("v\(Int(now.timeIntervalSince1970))", at: now, [("Cache-Control", "max-age=60")])
        }
        _ = try await cache.send()
        cache.clock.advance(by: .seconds(61))
        let second = try await cache.send()
        #expect(cache.requestCount == 2)
        #expect(second.status == .miss)
        #expect(second.body == "v\(Int(ManualClock.cacheStart.timeIntervalSince1970) + 61)")
        #expect(cache.server.requests.last?.header("If-None-Match") == nil)
    }

    @Test func noStoreResponsesAreNeverStored() async throws {
        let cache = try CacheHarness { _, now in
            .cached("secret", at: now, [("Cache-Control", "no-store, max-age=60"), ("ETag", "\"a\"")])
        }
        _ = try await cache.send()
        let second = try await cache.send()
        #expect(cache.requestCount == 2)
        #expect(second.status == .miss)
        #expect(cache.plugin.stats.stored == 0)
        #expect(cache.plugin.stats.entryCount == 0)
    }

    @Test func noCacheResponsesAreRevalidatedOnEveryUse() async throws {
        let cache = try CacheHarness { request, now in
            request.header("If-None-Match") == "\"a\""
                ? ServerResponse(status: 304, headers: [("Date", httpDate(now)), ("ETag", "\"a\"")])
                : .cached("body", at: now, [("Cache-Control", "no-cache, max-age=600"), ("ETag", "\"a\"")])
        }
        _ = try await cache.send()
        let second = try await cache.send()
        #expect(cache.requestCount == 2)
        #expect(cache.server.requests.last?.header("If-None-Match") == "\"a\"")
        #expect(second.status == .revalidated)
        #expect(second.body == "body")
        #expect(second.response.statusCode == 200)
    }

    @Test func expiresIsMeasuredFromDate() async throws {
        let cache = try CacheHarness { _, now in
            .cached("x", at: now, [("Expires", httpDate(now.addingTimeInterval(100)))])
        }
        _ = try await cache.send()
        cache.clock.advance(by: .seconds(99))
        #expect(try await cache.send().status == .hit)
        cache.clock.advance(by: .seconds(2))
        #expect(try await cache.send().status == .miss)
        #expect(cache.requestCount == 2)
    }

    @Test func anInvalidExpiresMeansAlreadyExpired() async throws {
        let cache = try CacheHarness { _, now in .cached("x", at: now, [("Expires", "0"), ("ETag", "\"e\"")]) }
        _ = try await cache.send()
        _ = try await cache.send()
        #expect(cache.requestCount == 2)
        #expect(cache.server.requests.last?.header("If-None-Match") == "\"e\"")
    }

    @Test func theAgeHeaderAndAnOldDateCountTowardsTheAge() async throws {
        // The origin's copy is already 90 s old (Age), its Date 30 s in the past: the corrected age is 90 s.
        let cache = try CacheHarness { _, now in
            .cached("x", at: now.addingTimeInterval(-30), [("Cache-Control", "max-age=100"), ("Age", "90")])
        }
        _ = try await cache.send()
        cache.clock.advance(by: .seconds(5))
        let hit = try await cache.send()
        #expect(hit.status == .hit)
        #expect(hit.header("Age") == "95")
        cache.clock.advance(by: .seconds(6))
        #expect(try await cache.send().status == .miss)
        #expect(cache.requestCount == 2)
    }

    @Test func anOldDateAloneAgesTheResponse() async throws {
        // No Age header, but the Date is 50 s before the response arrived: the apparent age is 50 s.
        let cache = try CacheHarness { _, now in
            .cached("x", at: now.addingTimeInterval(-50), [("Cache-Control", "max-age=60")])
        }
        _ = try await cache.send()
        cache.clock.advance(by: .seconds(9))
        #expect(try await cache.send().status == .hit)
        cache.clock.advance(by: .seconds(2))
        #expect(try await cache.send().status == .miss)
    }

    @Test func lastModifiedGivesAHeuristicLifetimeOfTenPercent() async throws {
        // Modified 1000 s before Date: fresh for 100 s, then validated with If-Modified-Since.
        let cache = try CacheHarness { request, now in
            let lastModified = httpDate(ManualClock.cacheStart.addingTimeInterval(-1_000))
            if request.header("If-Modified-Since") == lastModified {
                return ServerResponse(status: 304, headers: [("Date", httpDate(now))])
            }
            return .cached("page", at: now, [("Last-Modified", lastModified)])
        }
        _ = try await cache.send()
        cache.clock.advance(by: .seconds(99))
        #expect(try await cache.send().status == .hit)
        #expect(cache.requestCount == 1)
        cache.clock.advance(by: .seconds(2))
        let validated = try await cache.send()
        #expect(validated.status == .revalidated)
        #expect(validated.body == "page")
        #expect(cache.requestCount == 2)
    }

    @Test func theHeuristicLifetimeIsCapped() async throws {
        // Modified a year ago: 10 % would be 36 days; the cap is one hour here.
        let cache = try CacheHarness(
            configure: { $0.maximumHeuristicLifetime = .seconds(3_600) },
            handler: { _, now in
                .cached("x", at: now, [("Last-Modified", httpDate(now.addingTimeInterval(-365 * 86_400)))])
            }
        )
        _ = try await cache.send()
        cache.clock.advance(by: .seconds(3_599))
        #expect(try await cache.send().status == .hit)
        cache.clock.advance(by: .seconds(2))
        #expect(try await cache.send().status != .hit)
        #expect(cache.requestCount == 2)
    }

    @Test func responsesWithoutFreshnessOrValidatorAreNotStored() async throws {
        let cache = try CacheHarness { _, now in .cached("x", at: now) }
        _ = try await cache.send()
        _ = try await cache.send()
        #expect(cache.requestCount == 2)
        #expect(cache.plugin.stats.stored == 0)
    }

    @Test func headRequestsAreCachedApartFromGet() async throws {
        let cache = try CacheHarness { _, now in .cached("body", at: now, [("Cache-Control", "max-age=60")]) }
        let head = try await cache.send(method: .head)
        #expect(head.body.isEmpty)
        let headAgain = try await cache.send(method: .head)
        #expect(headAgain.status == .hit)
        #expect(headAgain.body.isEmpty)
        let get = try await cache.send()
        #expect(get.status == .miss)
        #expect(get.body == "body")
        #expect(cache.requestCount == 2)
    }

    @Test(
        "17.6 a request's no-cache or max-age=0 wins over a stored immutable response",
        arguments: [["Cache-Control": "no-cache"], ["Cache-Control": "max-age=0"], ["Pragma": "no-cache"]]
    )
    func requestDirectivesWinOverImmutable(_ reload: [String: String]) async throws {
        let cache = try CacheHarness { request, now in
            request.header("If-None-Match") == "\"i\""
                ? ServerResponse(status: 304, headers: [("Date", httpDate(now)), ("ETag", "\"i\"")])
                : .cached("asset", at: now, [("Cache-Control", "max-age=600, immutable"), ("ETag", "\"i\"")])
        }
        _ = try await cache.send()
        // Without directives a fresh immutable response is a hit like any other.
        #expect(try await cache.send().status == .hit)
        let reloaded = try await cache.send(headers: reload)
        #expect(reloaded.status == .revalidated)
        #expect(reloaded.body == "asset")
        #expect(cache.requestCount == 2)
        #expect(cache.server.requests.last?.header("If-None-Match") == "\"i\"")
    }
}
