import Foundation
import NetworkAgent
import NetworkAgentDiskCache
import NetworkAgentTestServer
import NetworkAgentTestSupport
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Invalidation by unsafe methods (RFC 9111 §4.4) over the wire.
@Suite struct DiskCacheInvalidationTests {
    static func origin() throws -> CacheHarness {
        try CacheHarness { request, now in
            switch request.method {
            case "GET", "HEAD": .cached("got \(request.path)", at: now, [("Cache-Control", "max-age=600")])
            case "POST":
                .text("created", status: 201, headers: [("Location", "/items/7"), ("Content-Location", "/other")])
            default: .text("done", status: request.header("X-Fail") == nil ? 200 : 500)
            }
        }
    }

    @Test(arguments: [HTTPMethod.post, .put, .patch, .delete])
    func anUnsafeRequestInvalidatesItsURL(_ method: HTTPMethod) async throws {
        let cache = try Self.origin()
        _ = try await cache.send("/items")
        #expect(try await cache.send("/items").status == .hit)
        let unsafe = try await cache.send("/items", method: method)
        #expect(unsafe.status == nil)
        #expect(try await cache.send("/items").status == .miss)
        #expect(cache.requestCount == 3)
        #expect(cache.plugin.stats.invalidated == 1)
    }

    @Test func locationAndContentLocationAreInvalidatedToo() async throws {
        let cache = try Self.origin()
        for path in ["/items", "/items/7", "/other", "/unrelated"] { _ = try await cache.send(path) }
        _ = try await cache.send("/items", method: .post)
        #expect(try await cache.send("/items/7").status == .miss)
        #expect(try await cache.send("/other").status == .miss)
        #expect(try await cache.send("/unrelated").status == .hit)
        #expect(cache.plugin.stats.invalidated == 3)
    }

    @Test func anUnsafeRequestThatFailsInvalidatesNothing() async throws {
        let cache = try Self.origin()
        _ = try await cache.send("/items")
        let failed = try await cache.send("/items", method: .put, headers: ["X-Fail": "1"])
        #expect(failed.response.statusCode == 500)
        #expect(try await cache.send("/items").status == .hit)
    }

    @Test func invalidationReachesEveryUserAndVariant() async throws {
        let cache = try Self.origin()
        _ = try await cache.send("/items", headers: ["Authorization": "Bearer a"])
        _ = try await cache.send("/items", headers: ["Authorization": "Bearer b"])
        _ = try await cache.send("/items", method: .head)
        #expect(cache.plugin.stats.entryCount == 3)
        _ = try await cache.send("/items", method: .delete, headers: ["Authorization": "Bearer a"])
        #expect(cache.plugin.stats.entryCount == 0)
    }
}
