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

/// Secondary keys (RFC 9111 §4.1): `Vary` over the wire.
@Suite struct DiskCacheVaryTests {
    @Test func variantsAreStoredAndServedPerVaryingHeader() async throws {
        let cache = try CacheHarness { request, now in
            .cached(
                "lang=\(request.header("Accept-Language") ?? "none")",
                at: now,
                [("Cache-Control", "max-age=60"), ("Vary", "Accept-Language")]
            )
        }
        #expect(try await cache.send(headers: ["Accept-Language": "en"]).body == "lang=en")
        #expect(try await cache.send(headers: ["Accept-Language": "fr"]).body == "lang=fr")
        let english = try await cache.send(headers: ["Accept-Language": "en"])
        let french = try await cache.send(headers: ["Accept-Language": "fr"])
        #expect(english.status == .hit && english.body == "lang=en")
        #expect(french.status == .hit && french.body == "lang=fr")
        // Without the header the request is another variant (FoundationNetworking then sends its own default
        // Accept-Language, which the cache cannot see; the stored variant is what such requests get).
        #expect(try await cache.send().status == .miss)
        #expect(try await cache.send().status == .hit)
        #expect(cache.requestCount == 3)
        #expect(cache.plugin.stats.entryCount == 3)
    }

    @Test func varyingValuesAreNormalisedForWhitespace() async throws {
        let cache = try CacheHarness { _, now in
            .cached("x", at: now, [("Cache-Control", "max-age=60"), ("Vary", "accept-language")])
        }
        _ = try await cache.send(headers: ["Accept-Language": "en, fr"])
        #expect(try await cache.send(headers: ["Accept-Language": "en,fr"]).status == .hit)
        #expect(try await cache.send(headers: ["Accept-Language": "fr,en"]).status == .miss)
        #expect(cache.requestCount == 2)
    }

    @Test func varyStarIsNeverServed() async throws {
        let cache = try CacheHarness { _, now in
            .cached("x", at: now, [("Cache-Control", "max-age=60"), ("Vary", "*")])
        }
        _ = try await cache.send()
        let second = try await cache.send()
        #expect(second.status == .miss)
        #expect(cache.requestCount == 2)
        #expect(cache.plugin.stats.entryCount == 0)
    }

    @Test func aChangedVaryReplacesTheOlderVariants() async throws {
        let cache = try CacheHarness { _, now in
            .cached("by-language", at: now, [("Cache-Control", "max-age=10"), ("Vary", "Accept-Language")])
        }
        _ = try await cache.send(headers: ["Accept-Language": "en"])
        _ = try await cache.send(headers: ["Accept-Language": "de"])
        cache.clock.advance(by: .seconds(20))
        cache.respond { _, now in
            .cached("by-encoding", at: now, [("Cache-Control", "max-age=60"), ("Vary", "X-Mode")])
        }
        _ = try await cache.send(headers: ["Accept-Language": "en"])
        #expect(cache.plugin.stats.entryCount == 1)
        #expect(try await cache.send(headers: ["Accept-Language": "de"]).body == "by-encoding")
        #expect(cache.requestCount == 3)
    }
}
