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

/// Which stored response a 304 updates (RFC 9111 §4.3.4, issue 27), and over the wire that the update, a new
/// `ETag` included, is stored and used by the next validation.
@Suite struct NotModifiedUpdateTests: PolicyFixture {
    // MARK: §4.3.4 which stored response a 304 updates

    /// `Last-Modified` more than 60 s before `Date`: a strong validator (RFC 9110 §8.8.2.2).
    var strongLastModified: String { httpDate(at(-3600)) }

    func validated() -> CachedEntry {
        entry(["Date": httpDate(at(0)), "ETag": "\"v1\"", "Last-Modified": strongLastModified, "X-Version": "1"])
    }

    @Test func a304WithANewETagAndTheSameStrongLastModifiedUpdatesTheStoredResponse() {
        let headers = ["Date": httpDate(at(20)), "ETag": "\"v2\"", "Last-Modified": strongLastModified]
        #expect(policy.notModified(headers, matches: validated()))
        let merged = policy.merging(headers, into: validated(), requestDate: at(20), responseDate: at(20))
        #expect(merged.header("ETag") == "\"v2\"")
        #expect(merged.header("X-Version") == "1")
        let conditional = policy.conditionalRequest(URLRequest(url: URL(fileURLWithPath: "/")), for: merged)
        #expect(conditional.value(forHTTPHeaderField: "If-None-Match") == "\"v2\"")
    }

    @Test func a304WhoseOnlyStrongValidatorIsAnotherETagUpdatesNothing() {
        #expect(!policy.notModified(["ETag": "\"v2\""], matches: validated()))
        // A Last-Modified less than 60 s before Date is weak: the new strong ETag still identifies nothing stored.
        let weak = entry(["Date": httpDate(at(0)), "ETag": "\"v1\"", "Last-Modified": httpDate(at(-10))])
        #expect(!policy.notModified(["ETag": "\"v2\"", "Last-Modified": httpDate(at(-10))], matches: weak))
        // Another Last-Modified identifies nothing either, whatever the ETag.
        #expect(!policy.notModified(["ETag": "\"v2\"", "Last-Modified": httpDate(at(-7200))], matches: validated()))
    }

    @Test func a304WithWeakValidatorsUpdatesTheResponseTheyCorrespondTo() {
        #expect(policy.notModified(["ETag": "W/\"v1\""], matches: validated()))
        #expect(!policy.notModified(["ETag": "W/\"v2\""], matches: validated()))
        let weak = entry(["Date": httpDate(at(0)), "ETag": "W/\"v1\"", "Last-Modified": httpDate(at(-10))])
        #expect(policy.notModified(["ETag": "W/\"v2\"", "Last-Modified": httpDate(at(-10))], matches: weak))
        #expect(policy.notModified(["ETag": "\"v1\""], matches: weak))
    }

    // MARK: §4.3.4 304 updates

    /// The 304 carries a new `ETag` and the stored strong `Last-Modified`, which identifies the stored response:
    /// its fields are updated, `ETag` included, and the next validation sends the new tag.
    @Test func a304WithANewETagUpdatesTheStoredFieldsAndTheNextValidationUsesIt() async throws {
        let lastModified = httpDate(ManualClock.cacheStart.addingTimeInterval(-3600))
        let cache = try CacheHarness { _, now in
            .cached(
                "original",
                at: now,
                [("Cache-Control", "max-age=10"), ("ETag", "\"v1\""), ("Last-Modified", lastModified), ("X-V", "1")]
            )
        }
        _ = try await cache.send()
        cache.clock.advance(by: .seconds(20))
        cache.respond { request, now in
            switch request.header("If-None-Match") {
            case "\"v1\"", "\"v2\"":
                ServerResponse(
                    status: 304,
                    headers: [
                        ("Date", httpDate(now)), ("ETag", "\"v2\""), ("Last-Modified", lastModified),
                        ("Cache-Control", "max-age=10"), ("X-V", "2"), ("Content-Length", "0"),
                    ]
                )
            default: .cached("refetched", at: now, [("Cache-Control", "max-age=10"), ("ETag", "\"v3\"")])
            }
        }
        let revalidated = try await cache.send()
        #expect(revalidated.status == .revalidated)
        #expect(revalidated.body == "original")
        #expect(revalidated.header("ETag") == "\"v2\"")
        #expect(revalidated.header("X-V") == "2")
        #expect(revalidated.header("Content-Length") == "8")
        #expect(cache.requestCount == 2)
        cache.clock.advance(by: .seconds(20))
        let again = try await cache.send()
        #expect(again.status == .revalidated)
        #expect(again.body == "original")
        #expect(cache.server.requests.last?.header("If-None-Match") == "\"v2\"")
        #expect(cache.requestCount == 3)
    }
}
