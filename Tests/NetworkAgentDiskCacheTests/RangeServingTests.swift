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

/// A `Range` request answered from a stored complete 200 (RFC 9110 §14.2, §15.3.7, §15.5.17; RFC 9111 §3.4 lets a
/// cache serve ranges of what it holds): a 206 with the bytes and their `Content-Range`, or a 416 when the range
/// misses the body. Ranges the cache cannot serve from what it holds go to the origin untouched.
@Suite struct RangeServingTests {
    static let body = "0123456789"

    /// An origin whose full responses are fresh for 100 s and that answers any range with its own 206.
    static func origin() throws -> CacheHarness {
        try CacheHarness { request, now in
            if let range = request.header("Range") {
                return .cached("origin:\(range)", status: 206, at: now, [("Content-Range", "bytes 0-1/10")])
            }
            return .cached(body, at: now, [("Cache-Control", "max-age=100"), ("ETag", "\"r\"")])
        }
    }

    @Test(arguments: [
        ("bytes=2-4", "234", "bytes 2-4/10"), ("bytes=7-", "789", "bytes 7-9/10"), ("bytes=-3", "789", "bytes 7-9/10"),
        ("bytes=-20", "0123456789", "bytes 0-9/10"), ("bytes=5-100", "56789", "bytes 5-9/10"),
        ("bytes=0-0", "0", "bytes 0-0/10"), ("BYTES=3-4", "34", "bytes 3-4/10"),
    ])
    func aRangeIsServedFromAStoredCompleteResponse(
        _ range: String,
        _ bytes: String,
        _ contentRange: String
    )
        async throws
    {
        let cache = try Self.origin()
        _ = try await cache.send()
        cache.clock.advance(by: .seconds(4))
        let partial = try await cache.send(headers: ["Range": range])
        #expect(partial.response.statusCode == 206)
        #expect(partial.body == bytes)
        #expect(partial.header("Content-Range") == contentRange)
        #expect(partial.header("Content-Length") == "\(bytes.utf8.count)")
        #expect(partial.status == .hit)
        // The fields a 200 would have carried (RFC 9110 §15.3.7), and the age of the stored response.
        #expect(partial.header("ETag") == "\"r\"")
        #expect(partial.header("Cache-Control") == "max-age=100")
        #expect(partial.header("Age") == "4")
        #expect(cache.requestCount == 1)
        // The stored response is unchanged by it.
        let whole = try await cache.send()
        #expect(whole.response.statusCode == 200)
        #expect(whole.body == Self.body)
        #expect(cache.requestCount == 1)
    }

    @Test(arguments: ["bytes=10-", "bytes=-0", "bytes=20-30"])
    func anUnsatisfiableRangeGets416(_ range: String) async throws {
        let cache = try Self.origin()
        _ = try await cache.send()
        let refused = try await cache.send(headers: ["Range": range])
        #expect(refused.response.statusCode == 416)
        #expect(refused.header("Content-Range") == "bytes */10")
        #expect(refused.body.isEmpty)
        #expect(refused.status == .hit)
        #expect(cache.requestCount == 1)
    }

    /// Several ranges, another unit, an invalid range: the origin gets the request exactly as the caller made it,
    /// and the cache neither answers nor stores anything for it.
    @Test(arguments: ["bytes=0-1,4-5", "items=0-1", "bytes=5-2"])
    func aRangeItCannotServeGoesToTheOriginUntouched(_ range: String) async throws {
        let cache = try Self.origin()
        _ = try await cache.send()
        let forwarded = try await cache.send(headers: ["Range": range])
        #expect(forwarded.response.statusCode == 206)
        #expect(forwarded.body == "origin:\(range)")
        #expect(forwarded.status == nil)
        #expect(cache.requestCount == 2)
        let sent = try #require(cache.server.requests.last)
        #expect(sent.headerValues("Range") == [range])
        #expect(sent.header("If-None-Match") == nil)
        #expect(try await cache.send().status == .hit)
    }

    /// A stored response that needs validation first is not used: the range goes to the origin as it is (no
    /// conditional added), and the stored response stays as it was.
    @Test func aStaleStoredResponseLeavesTheRangeToTheOrigin() async throws {
        let cache = try Self.origin()
        _ = try await cache.send()
        cache.clock.advance(by: .seconds(200))
        let forwarded = try await cache.send(headers: ["Range": "bytes=0-1"])
        #expect(forwarded.body == "origin:bytes=0-1")
        #expect(forwarded.status == nil)
        #expect(cache.server.requests.last?.header("If-None-Match") == nil)
        #expect(cache.plugin.stats.entryCount == 1)
    }

    /// A stale response the request or the response accepts serves the range too: within `max-stale`, and within
    /// `stale-while-revalidate`, whose background refresh asks for the whole resource, not the range.
    @Test func aStaleResponseThatMayBeServedAnswersTheRange() async throws {
        let cache = try CacheHarness { request, now in
            if let range = request.header("Range") { return .cached("origin:\(range)", status: 206, at: now) }
            return .cached(
                Self.body,
                at: now,
                [("Cache-Control", "max-age=10, stale-while-revalidate=100"), ("ETag", "\"s\"")]
            )
        }
        _ = try await cache.send()
        cache.clock.advance(by: .seconds(20))
        let accepted = try await cache.send(headers: ["Range": "bytes=0-1", "Cache-Control": "max-stale=30"])
        #expect(accepted.body == "01")
        #expect(accepted.status == .stale)
        #expect(cache.requestCount == 1)
        let refreshing = try await cache.send(headers: ["Range": "bytes=-2"])
        #expect(refreshing.response.statusCode == 206)
        #expect(refreshing.body == "89")
        #expect(refreshing.status == .stale)
        #expect(await eventually { cache.requestCount == 2 })
        let refresh = try #require(cache.server.requests.last)
        #expect(refresh.header("Range") == nil)
        #expect(refresh.header("If-None-Match") == "\"s\"")
    }

    /// With nothing stored the range goes to the origin, and its 206 is not stored: the next full request is a miss.
    @Test func aRangeWithNothingStoredIsForwardedAndNotStored() async throws {
        let cache = try Self.origin()
        let forwarded = try await cache.send(headers: ["Range": "bytes=-3"])
        #expect(forwarded.body == "origin:bytes=-3")
        #expect(cache.plugin.stats.entryCount == 0)
        #expect(try await cache.send().status == .miss)
        #expect(cache.requestCount == 2)
    }

    /// A stored body in a content coding (decoded by the transport, or kept encoded) is not sliced: the byte
    /// positions of a range count in the encoded form the origin sent (RFC 9110 §14.1.4).
    @Test func anEncodedStoredBodyLeavesTheRangeToTheOrigin() async throws {
        // "0123456789", gzipped.
        let gzipped = Data([
            31, 139, 8, 0, 0, 0, 0, 0, 2, 3, 51, 48, 52, 50, 54, 49, 53, 51, 183, 176, 4, 0, 198, 199, 132, 166, 10, 0,
            0,
            0,
        ])
        let cache = try CacheHarness { request, now in
            if let range = request.header("Range") {
                return .cached("origin:\(range)", status: 206, at: now, [("Content-Range", "bytes 0-1/30")])
            }
            return ServerResponse(
                headers: [("Date", httpDate(now)), ("Cache-Control", "max-age=100"), ("Content-Encoding", "gzip")],
                body: .data(gzipped)
            )
        }
        _ = try await cache.send()
        #expect(try await cache.send().status == .hit)
        let forwarded = try await cache.send(headers: ["Range": "bytes=0-1"])
        #expect(forwarded.body == "origin:bytes=0-1")
        #expect(forwarded.status == nil)
        #expect(cache.requestCount == 2)
    }

    /// `only-if-cached` with a range the store cannot answer: the 504 of RFC 9111 §5.2.1.7, no request.
    @Test func onlyIfCachedWithARangeItCannotServeGets504() async throws {
        let cache = try Self.origin()
        let refused = try await cache.send(headers: ["Range": "bytes=0-1", "Cache-Control": "only-if-cached"])
        #expect(refused.response.statusCode == 504)
        #expect(cache.requestCount == 0)
    }
}
