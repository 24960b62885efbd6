import Foundation
import NetworkAgent
import Testing

@testable import NetworkAgentDiskCache

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `RequestFields` finds a request's fields as Foundation does (names compared without case), including when its
/// quick check of name lengths says a name cannot be there, and the credential names read the marks only when the
/// request carries them.
@Suite struct RequestFieldsTests {
    private static func request(_ fields: [String: String]) throws -> URLRequest {
        var request = URLRequest(url: try #require(URL(string: "https://example.com/a")))
        for (name, value) in fields { request.setValue(value, forHTTPHeaderField: name) }
        return request
    }

    @Test func findsFieldsInAnyCaseAndNothingElse() throws {
        let request = try Self.request(["Accept": "text/plain", "x-trace": "1", "If-None-Match": "\"e\""])
        let fields = RequestFields(request)
        for name in ["Accept", "accept", "ACCEPT", "X-Trace", "x-trace", "if-none-match", "If-None-Match"] {
            #expect(fields.value(name) == request.value(forHTTPHeaderField: name), "\(name)")
            #expect(fields.value(name) != nil, "\(name)")
        }
        for name in ["Range", "Accepts", "Accep", "Pragma", "Cache-Control", "Authorization", "", "X-Tracf"] {
            #expect(fields.value(name) == nil, "\(name)")
            #expect(request.value(forHTTPHeaderField: name) == nil, "\(name)")
        }
        #expect(fields.containsAny(of: DiskCachePlugin.bypassHeaders))
        #expect(!RequestFields(try Self.request(["Accept": "a"])).containsAny(of: DiskCachePlugin.bypassHeaders))
    }

    @Test func namesOfSixtyThreeBytesAndMoreShareOneBit() throws {
        let long = String(repeating: "a", count: 70)
        let fields = RequestFields(try Self.request([long: "v"]))
        #expect(fields.value(long.uppercased()) == "v")
        #expect(fields.value(String(repeating: "a", count: 80)) == nil)
        #expect(fields.value(String(repeating: "a", count: 63)) == nil)
        #expect(fields.value("Range") == nil)
    }

    @Test func aRequestWithoutFieldsHasNone() throws {
        let fields = RequestFields(URLRequest(url: try #require(URL(string: "https://example.com/"))))
        #expect(fields.value("Accept") == nil)
        #expect(!fields.containsAny(of: DiskCachePlugin.bypassHeaders))
    }

    @Test func credentialNamesReadTheMarksOnlyWhenTheRequestCarriesThem() throws {
        var marked = try Self.request(["Authorization": "Bearer t", "X-Api-Key": "k"])
        marked.sensitiveHeaderNames.insert("X-Api-Key")
        let plain = try Self.request(["Authorization": "Bearer t", "X-Api-Key": "k"])
        let three = ["authorization", "proxy-authorization", "cookie"]
        #expect(CacheKey.credentialNames(of: marked, fields: RequestFields(marked)) == three + ["x-api-key"])
        #expect(CacheKey.credentialNames(of: marked) == three + ["x-api-key"])
        #expect(CacheKey.credentialNames(of: plain, fields: RequestFields(plain)) == three)
        #expect(CacheKey.credentialNames(of: plain) == three)
        // The key's fingerprint follows the marks: marking a header makes another user's key.
        #expect(CacheKey(request: marked) != CacheKey(request: plain))
    }
}
