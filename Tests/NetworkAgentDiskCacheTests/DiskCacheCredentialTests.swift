import Foundation
import NetworkAgent
import NetworkAgentDiskCache
import NetworkAgentTestServer
import NetworkAgentTestSupport
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The credential fingerprint in the cache key: one user never gets another's response.
@Suite struct DiskCacheCredentialTests {
    static func origin() throws -> CacheHarness {
        try CacheHarness { request, now in
            .cached(
                "profile of \(request.header("Authorization") ?? request.header("Cookie") ?? "nobody")",
                at: now,
                [("Cache-Control", "private, max-age=600")]
            )
        }
    }

    @Test func twoUsersDoNotShareEntries() async throws {
        let cache = try Self.origin()
        #expect(
            try await cache.send(headers: ["Authorization": "Bearer alice-token"]).body
                == "profile of Bearer alice-token"
        )
        let bob = try await cache.send(headers: ["Authorization": "Bearer bob-token"])
        #expect(bob.status == .miss)
        #expect(bob.body == "profile of Bearer bob-token")
        let alice = try await cache.send(headers: ["Authorization": "Bearer alice-token"])
        #expect(alice.status == .hit)
        #expect(alice.body == "profile of Bearer alice-token")
        let anonymous = try await cache.send()
        #expect(anonymous.status == .miss)
        #expect(cache.requestCount == 3)
    }

    @Test("a header marked sensitive (an API key) is a credential: two keys never share an entry")
    func sensitiveHeadersAreCredentialsToo() async throws {
        let cache = try CacheHarness { request, now in
            .cached(
                "data for \(request.header("X-API-Key") ?? "nobody")",
                at: now,
                [("Cache-Control", "private, max-age=600")]
            )
        }
        var configuration = NetworkAgentConfiguration()
        configuration.sensitiveHeaders = ["X-API-Key"]
        let provider = NetworkAgentProvider<CacheEndpoint>(
            plugins: [cache.plugin],
            agent: TestTransport.agent(configuration: configuration)
        )
        func get(key: String) async throws -> String {
            let headers = ["Accept": "text/plain", "X-API-Key": key]
            let endpoint = CacheEndpoint(baseURL: cache.server.baseURL, path: "/resource", headers: headers)
            return String(decoding: try await provider.request(endpoint: endpoint).data, as: UTF8.self)
        }
        #expect(try await get(key: "key-a") == "data for key-a")
        #expect(try await get(key: "key-b") == "data for key-b")
        #expect(try await get(key: "key-a") == "data for key-a")
        #expect(cache.requestCount == 2)
    }

    @Test func cookiesAreCredentialsToo() async throws {
        let cache = try Self.origin()
        _ = try await cache.send(headers: ["Cookie": "session=1"])
        #expect(try await cache.send(headers: ["Cookie": "session=2"]).body == "profile of session=2")
        #expect(try await cache.send(headers: ["Cookie": "session=1"]).status == .hit)
        #expect(cache.requestCount == 2)
    }

    @Test func credentialsAreNeverWrittenToDisk() async throws {
        let cache = try CacheHarness { _, now in
            .cached("profile", at: now, [("Cache-Control", "max-age=600"), ("Vary", "Cookie, Authorization")])
        }
        _ = try await cache.send(headers: ["Authorization": "Bearer very-secret-token", "Cookie": "sid=cookie-secret"])
        #expect(cache.plugin.stats.entryCount == 1)
        let directory = try #require(cache.directory).url
        let files = try #require(FileManager.default.enumerator(atPath: directory.path)).compactMap { $0 as? String }
        var contents = Data()
        for file in files {
            contents.append((try? Data(contentsOf: directory.appendingPathComponent(file))) ?? Data())
        }
        let text = String(decoding: contents, as: UTF8.self)
        #expect(text.contains("profile"))
        #expect(!text.contains("very-secret-token"))
        #expect(!text.contains("cookie-secret"))
    }
}
