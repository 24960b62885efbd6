import Foundation
import NetworkAgentTestServer
import NetworkAgentTestSupport
import NetworkAgentTesting
import Testing

@testable import NetworkAgentDiskCache

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// How a response's `max-age` is read when it is not a plain integer (RFC 9111 §1.2.2, §4.2.1): decimals and junk
/// are invalid, so the response is stale at once ("caches are encouraged to consider responses that have invalid
/// freshness information to be stale"); spaces around `=` are tolerated; of repeated directives, on one line or two,
/// the first counts.
@Suite struct MaxAgeParsingTests {
    @Test(arguments: ["max-age=3600.5", "max-age=100a", "max-age=a100", "max-age=", "max-age", "max-age=-1"])
    func aMaxAgeThatIsNoIntegerIsInvalid(_ field: String) {
        #expect(CacheControl(field).maxAge == .invalid)
    }

    @Test(arguments: ["max-age = 3600", "max-age= 3600", "max-age =3600", " max-age=3600 ", "MAX-AGE=\"3600\""])
    func spacesAroundTheEqualsSignAreTolerated(_ field: String) {
        #expect(CacheControl(field).maxAge == .value(3600))
    }

    @Test(arguments: [
        ("max-age=10, max-age=3600", 10), ("max-age=3600, max-age=10", 3600), ("max-age=10,max-age=x", 10),
    ])
    func theFirstMaxAgeCounts(_ field: String, _ seconds: Int) {
        #expect(CacheControl(field).maxAge == .value(seconds))
    }

    /// A decimal `max-age` is stale at once: the response is validated before its next use, even next to a future
    /// `Expires` (`max-age` takes precedence, and the restrictive reading wins).
    @Test func aDecimalMaxAgeIsStaleOverTheWire() async throws {
        let cache = try CacheHarness { _, now in
            .cached(
                "decimal",
                at: now,
                [
                    ("Cache-Control", "max-age=3600.5"), ("Expires", httpDate(now.addingTimeInterval(3600))),
                    ("ETag", "\"d\""),
                ]
            )
        }
        _ = try await cache.send()
        let second = try await cache.send()
        #expect(second.status != .hit)
        #expect(cache.requestCount == 2)
        #expect(cache.server.requests.last?.header("If-None-Match") == "\"d\"")
    }

    /// Two `Cache-Control` lines, which the transport joins: the first line's `max-age` counts.
    @Test func theFirstOfTwoCacheControlLinesCountsOverTheWire() async throws {
        let cache = try CacheHarness { _, now in
            .cached("twice", at: now, [("Cache-Control", "max-age=10"), ("Cache-Control", "max-age=3600")])
        }
        _ = try await cache.send()
        cache.clock.advance(by: .seconds(5))
        #expect(try await cache.send().status == .hit)
        cache.clock.advance(by: .seconds(10))
        #expect(try await cache.send().status == .miss)
        #expect(cache.requestCount == 2)
    }
}
