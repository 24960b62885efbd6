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

extension CacheHarness {
    /// Streams a resource through the cache and reads the whole body.
    ///
    /// - Parameters:
    ///   - path: The resource.
    ///   - headers: Header fields besides `Accept: text/plain`.
    func stream(_ path: String = "/resource", headers: [String: String] = [:]) async throws -> CacheAnswer {
        var allHeaders = ["Accept": "text/plain"]
        allHeaders.merge(headers) { $1 }
        let endpoint = CacheEndpoint(baseURL: server.baseURL, path: path, headers: allHeaders)
        return try await recorder.observing {
            let stream = try await provider.stream(endpoint: endpoint)
            var body = Data()
            for try await chunk in stream.body { body.append(chunk) }
            return CacheAnswer(body: String(decoding: body, as: UTF8.self), response: stream.response)
        }
    }
}

/// `provider.stream(endpoint:)` through the cache: a streamed body goes to the caller, never into the store (the
/// cache does not see its bytes), while a stored response still answers a stream.
@Suite struct DiskCacheStreamingTests {
    @Test("17.1 a streamed response is not stored: the next request goes to the origin, never an empty 200")
    func aStreamedResponseIsNotStored() async throws {
        let cache = try CacheHarness { _, now in
            .cached("the whole streamed body", at: now, [("Cache-Control", "max-age=60"), ("ETag", "\"s\"")])
        }
        let streamed = try await cache.stream()
        #expect(streamed.body == "the whole streamed body")
        #expect(streamed.status == .miss)
        #expect(cache.plugin.stats.stored == 0)

        let requested = try await cache.send()
        #expect(requested.body == "the whole streamed body")
        #expect(requested.status == .miss)
        #expect(cache.requestCount == 2)
        // The buffered request did store it: now both kinds of call are answered from the store.
        #expect(try await cache.send().status == .hit)
        #expect(cache.requestCount == 2)
    }

    @Test("17.1 a stream that finds a fresh stored response gets the stored body as its stream")
    func aStreamIsAnsweredFromTheStore() async throws {
        let cache = try CacheHarness { _, now in .cached("stored body", at: now, [("Cache-Control", "max-age=60")]) }
        _ = try await cache.send()
        let streamed = try await cache.stream()
        #expect(streamed.status == .hit)
        #expect(streamed.response.statusCode == 200)
        #expect(streamed.body == "stored body")
        #expect(cache.requestCount == 1)
    }

    @Test("17.1 a stream that revalidates a stale response with a 304 gets the stored body")
    func aStreamRevalidatedWith304GetsTheStoredBody() async throws {
        let cache = try CacheHarness { request, now in
            request.header("If-None-Match") == "\"r\""
                ? ServerResponse(status: 304, headers: [("Date", httpDate(now)), ("ETag", "\"r\"")])
                : .cached("stored body", at: now, [("Cache-Control", "max-age=10"), ("ETag", "\"r\"")])
        }
        _ = try await cache.send()
        cache.clock.advance(by: .seconds(30))
        let streamed = try await cache.stream()
        #expect(streamed.status == .revalidated)
        #expect(streamed.body == "stored body")
        #expect(try await cache.send().status == .hit)
        #expect(cache.requestCount == 2)
    }

    @Test("17.1 a stream whose validation brings a new body does not store it and drops the outdated entry")
    func aStreamWithAModifiedAnswerDoesNotStoreIt() async throws {
        let cache = try CacheHarness { _, now in
            .cached("v1", at: now, [("Cache-Control", "max-age=10"), ("ETag", "\"1\"")])
        }
        _ = try await cache.send()
        cache.clock.advance(by: .seconds(30))
        cache.respond { _, now in .cached("v2", at: now, [("Cache-Control", "max-age=10"), ("ETag", "\"2\"")]) }
        let streamed = try await cache.stream()
        #expect(streamed.body == "v2")
        #expect(streamed.status == .miss)

        let requested = try await cache.send()
        #expect(requested.body == "v2")
        #expect(requested.status == .miss)
        // The stale v1 was dropped, so the request was sent without conditions rather than validating it.
        #expect(cache.server.requests.last?.header("If-None-Match") == nil)
        #expect(cache.requestCount == 3)
    }

    @Test("17.1 the stale-while-revalidate refresh started by a stream stores the whole new body")
    func theBackgroundRefreshOfAStreamIsBuffered() async throws {
        let cache = try CacheHarness { _, now in
            .cached("v1", at: now, [("Cache-Control", "max-age=10, stale-while-revalidate=100"), ("ETag", "\"1\"")])
        }
        _ = try await cache.send()
        cache.clock.advance(by: .seconds(30))
        cache.respond { request, now in
            request.header("If-None-Match") == "\"1\""
                ? .cached(
                    "v2, in full",
                    at: now,
                    [("Cache-Control", "max-age=10, stale-while-revalidate=100"), ("ETag", "\"2\"")]
                )
                : .text("unexpected", status: 500)
        }
        let streamed = try await cache.stream()
        #expect(streamed.status == .stale)
        #expect(streamed.body == "v1")
        #expect(await eventually { cache.plugin.stats.stored == 2 })

        let refreshed = try await cache.send()
        #expect(refreshed.status == .hit)
        #expect(refreshed.body == "v2, in full")
        #expect(cache.requestCount == 2)
    }
}
