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

/// A request that matches no stored variant is sent with the stored variants' `ETag`s (RFC 9111 §4.3.1): a 304
/// naming one of them answers with that variant, stored for the new request's header values too (§4.3.4).
@Suite struct VaryValidationTests {
    static func origin() throws -> CacheHarness {
        try CacheHarness { request, now in
            let headers = [("Cache-Control", "max-age=60"), ("Vary", "Accept-Language"), ("ETag", "\"e1\"")]
            if let tags = request.header("If-None-Match"), tags.contains("\"e1\"") {
                return ServerResponse(status: 304, headers: [("Date", httpDate(now))] + headers)
            }
            return .cached("hello from \(request.header("Accept-Language") ?? "-")", at: now, headers)
        }
    }

    @Test func aVaryMismatchIsValidatedWithTheStoredETags() async throws {
        let cache = try Self.origin()
        let english = try await cache.send(headers: ["Accept-Language": "en"])
        #expect(english.body == "hello from en")
        let american = try await cache.send(headers: ["Accept-Language": "en-US"])
        #expect(american.status == .revalidated)
        #expect(american.body == "hello from en")
        #expect(cache.server.requests.last?.header("If-None-Match") == "\"e1\"")
        #expect(cache.requestCount == 2)
        // Stored for en-US now, and en is still there.
        #expect(try await cache.send(headers: ["Accept-Language": "en-US"]).status == .hit)
        #expect(try await cache.send(headers: ["Accept-Language": "en"]).status == .hit)
        #expect(cache.requestCount == 2)
    }

    @Test func a304NamingNoStoredVariantIsFollowedByAnUnconditionalRequest() async throws {
        let cache = try CacheHarness { request, now in
            let headers = [("Cache-Control", "max-age=60"), ("Vary", "Accept-Language")]
            if request.header("If-None-Match") != nil {
                return ServerResponse(status: 304, headers: [("Date", httpDate(now)), ("ETag", "\"other\"")] + headers)
            }
            let language = request.header("Accept-Language") ?? "-"
            return .cached("hello from \(language)", at: now, headers + [("ETag", "\"\(language)\"")])
        }
        _ = try await cache.send(headers: ["Accept-Language": "en"])
        let french = try await cache.send(headers: ["Accept-Language": "fr"])
        #expect(french.status == .miss)
        #expect(french.body == "hello from fr")
        #expect(cache.requestCount == 3)
        #expect(cache.server.requests.last?.header("If-None-Match") == nil)
    }
}
