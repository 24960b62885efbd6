import Foundation
import NetworkAgent
import NetworkAgentCurl
import NetworkAgentDiskCache
import NetworkAgentGzip
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `CurlTransport` against nginx over HTTPS (Scripts/nginx/nginx.conf.template): a certificate chain the test CA
/// vouches for, negotiated to HTTP/2, and the peers whose certificates must be refused (another name, an unknown
/// CA), each with the `URLError` code URLSession gives for the same failure.
///
/// Scripts/nginx/start makes the CAs and certificates with openssl at every start; every answer names the protocol
/// nginx spoke in `X-Protocol` (`HTTP/2.0`, `HTTP/1.1`).
@Suite(Interop.nginxHTTPSIsUp)
struct NginxHTTPSTests {
    let https = Interop.nginxHTTPS ?? URL(fileURLWithPath: "/")
    let testCA = Interop.testCA ?? URL(fileURLWithPath: "/")

    /// A transport that trusts the test CA (instead of or besides the system store, as libcurl's `CAINFO` does).
    func trusting(
        pin: String? = nil,
        httpVersion: CurlTransport.Configuration.HTTPVersion = .http2
    ) -> CurlTransport {
        CurlTransport(configuration: .init(caBundle: testCA, pinnedPublicKey: pin, httpVersion: httpVersion))
    }

    /// The error a GET of the 1 KiB document on `base` through `transport` fails with; a test failure when it
    /// succeeds or fails with another type.
    func failure(of base: URL, through transport: CurlTransport) async -> NetworkAgentError? {
        do {
            let (_, response) = try await NetworkAgent(transport: transport)
                .request(PeerEndpoint(baseURL: base, path: "/plain/data.json"))
            Issue.record("\(base) answered \((response as? HTTPURLResponse)?.statusCode ?? -1) instead of failing")
            return nil
        } catch let error as NetworkAgentError {
            return error
        } catch {
            Issue.record("\(base) failed with \(type(of: error)), not NetworkAgentError: \(error)")
            return nil
        }
    }

    @Test func theTestCAIsTrustedWithTheCABundleOptionAndHTTP2IsNegotiated() async throws {
        let (data, response) = try await NetworkAgent(transport: trusting())
            .request(PeerEndpoint(baseURL: https, path: "/plain/data.json"))
        let http = try #require(response as? HTTPURLResponse)
        #expect(http.statusCode == 200)
        #expect(data.count == 1024)
        #expect(http.value(forHTTPHeaderField: "X-Protocol") == "HTTP/2.0")
        // A new connection: its TLS handshake was timed.
        let handshake = try #require(response.transferTimings?.tlsHandshake)
        #expect(handshake > .zero)
    }

    @Test func http1IsSpokenOverTLSWhenAskedFor() async throws {
        let (_, response) = try await NetworkAgent(transport: trusting(httpVersion: .http1))
            .request(PeerEndpoint(baseURL: https, path: "/plain/data.json"))
        #expect((response as? HTTPURLResponse)?.value(forHTTPHeaderField: "X-Protocol") == "HTTP/1.1")
    }

    @Test func theSystemStoreAloneRejectsTheTestCertificate() async {
        let error = await failure(of: https, through: CurlTransport())
        #expect(error?.code == .transport)
        #expect(error?.urlErrorCode == .serverCertificateHasUnknownRoot, "\(String(describing: error))")
    }

    @Test(.enabled(if: Interop.nginxHTTPSUnknownCA != nil, "no unknown-CA peer"))
    func aCertificateFromAnUnknownCAFails() async throws {
        let base = try #require(Interop.nginxHTTPSUnknownCA)
        let error = await failure(of: base, through: trusting())
        #expect(error?.code == .transport)
        #expect(error?.urlErrorCode == .serverCertificateHasUnknownRoot, "\(String(describing: error))")
    }

    @Test(.enabled(if: Interop.nginxHTTPSMismatch != nil, "no name-mismatch peer"))
    func aCertificateForAnotherNameFails() async throws {
        let base = try #require(Interop.nginxHTTPSMismatch)
        let error = await failure(of: base, through: trusting())
        #expect(error?.code == .transport)
        // The chain is good (the test CA signed it): only the name is wrong, which is not an unknown root.
        #expect(error?.urlErrorCode == .serverCertificateUntrusted, "\(String(describing: error))")
    }

    @Test(.enabled(if: Interop.nginxHTTPSPin != nil, "no pin for the HTTPS peer"))
    func theRightPinnedKeyPasses() async throws {
        let pin = try #require(Interop.nginxHTTPSPin)
        let (data, response) = try await NetworkAgent(transport: trusting(pin: pin))
            .request(PeerEndpoint(baseURL: https, path: "/plain/data.json"))
        #expect((response as? HTTPURLResponse)?.statusCode == 200)
        #expect(data.count == 1024)
    }

    @Test func anotherPinnedKeyFails() async {
        // A well-formed pin (the SHA-256 of nothing) that no key has.
        let pin = "sha256//47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU="
        let error = await failure(of: https, through: trusting(pin: pin))
        #expect(error?.code == .transport)
        #expect(error?.urlErrorCode == .serverCertificateUntrusted, "\(String(describing: error))")
    }

    @Test func gzipAndRevalidationOverHTTP2() async throws {
        let agent = NetworkAgent(transport: trusting())
        let provider = NetworkAgentProvider<PeerEndpoint>(plugins: [.gzip(), .validate()], agent: agent)
        let (data, response) = try await provider.request(
            endpoint: PeerEndpoint(baseURL: https, path: "/data.json", headers: ["Accept-Encoding": "gzip"])
        )
        #expect(data.count == 1024)
        let http = try #require(response as? HTTPURLResponse)
        #expect(http.value(forHTTPHeaderField: "X-Protocol") == "HTTP/2.0")

        // Revalidation by the library: the disk cache stores nginx's answer (ETag, Last-Modified, no Cache-Control)
        // and, with no heuristic freshness, must ask nginx again with the stored ETag before reusing it. nginx
        // answers 304 only to such a conditional request; the caller gets the stored 200 and its body.
        let cache = DiskCachePlugin(store: MemoryStore(), configuration: .init(heuristicFraction: 0))
        let caching = NetworkAgentProvider<PeerEndpoint>(plugins: [cache, .validate()], agent: agent)
        let endpoint = PeerEndpoint(baseURL: https, path: "/plain/data.json")
        let (first, stored) = try await caching.request(endpoint: endpoint)
        #expect(CacheStatus(response: stored) == .miss)
        #expect((stored as? HTTPURLResponse)?.value(forHTTPHeaderField: "ETag") != nil)
        let (again, revalidated) = try await caching.request(endpoint: endpoint)
        #expect(CacheStatus(response: revalidated) == .revalidated)
        #expect((revalidated as? HTTPURLResponse)?.statusCode == 200)
        #expect(again == first)
        #expect(again.count == 1024)
        #expect(cache.stats.revalidated == 1)
    }

    /// 256 GETs at once from one warm transport all succeed over HTTP/2, and nginx's log of the counted route shows
    /// they shared at most two connections: multiplexed, not spread over the 64 connections a host may have.
    ///
    /// One request goes first so that the connection exists and nginx's SETTINGS (512 streams) have been read:
    /// until then libcurl (7.88) assumes the server allows 100 streams and a transfer past that opens a connection of
    /// its own, `CURLOPT_PIPEWAIT` or not (measured: 1 cold start in 20 spread over 64 connections, with the client
    /// limit raised). On a warm connection what remains is the transport's own limit: libcurl's default
    /// `CURLMOPT_MAX_CONCURRENT_STREAMS` of 100 spreads 256 transfers over up to 64 connections (5 runs in 10); a
    /// limit of 1,000 keeps them on one (30 runs in 30).
    @Test(.enabled(if: Interop.nginxDirectory != nil, "nginx's prefix is unknown (NETWORKAGENT_NGINX_DIR)"))
    func twoHundredFiftySixConcurrentGETsShareAWarmConnection() async throws {
        let count = 256
        let tag = UUID().uuidString
        let agent = NetworkAgent(transport: trusting())
        _ = try await agent.request(PeerEndpoint(baseURL: https, path: "/plain/data.json"))
        let protocols = try await withThrowingTaskGroup(of: String?.self) { group in
            for index in 0..<count {
                group.addTask {
                    let endpoint = PeerEndpoint(
                        baseURL: https,
                        path: "/counted/data.json",
                        task: .requestAttributes(attributes: ["tag": tag, "n": index], encoding: .url)
                    )
                    let (data, response) = try await agent.request(endpoint)
                    let http = response as? HTTPURLResponse
                    guard http?.statusCode == 200, data.count == 1024 else { return nil }
                    return http?.value(forHTTPHeaderField: "X-Protocol")
                }
            }
            var protocols: [String?] = []
            for try await value in group { protocols.append(value) }
            return protocols
        }
        #expect(protocols.count == count)
        #expect(protocols.allSatisfy { $0 == "HTTP/2.0" }, "\(Set(protocols.map { $0 ?? "failed" }))")

        let lines = try await countedRequests(tagged: tag, expecting: count)
        #expect(lines.count == count)
        let connections = Set(lines.map { $0.connection })
        #expect(connections.count <= 2, "\(count) requests used \(connections.count) connections")
        #expect(lines.allSatisfy { $0.protocol == "HTTP/2.0" })
    }

    /// The lines of nginx's `counted.log` (`<connection> <protocol> <request URI>`) whose URI carries `tag`, read
    /// until `expected` are there: nginx writes a line when it has finished a request, which can come just after
    /// the client has the response. Gives up after 10 seconds and returns what is there.
    func countedRequests(
        tagged tag: String,
        expecting expected: Int
    ) async throws -> [(connection: String, protocol: String)] {
        let log = try #require(Interop.nginxDirectory).appendingPathComponent("counted.log")
        let deadline = ContinuousClock.now + .seconds(10)
        while true {
            let text = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
            let lines = text.split(separator: "\n").filter { $0.contains(tag) }.map { line in
                let fields = line.split(separator: " ", maxSplits: 2)
                return (
                    connection: fields.first.map(String.init) ?? "",
                    protocol: fields.dropFirst().first.map(String.init) ?? ""
                )
            }
            if lines.count >= expected || ContinuousClock.now >= deadline { return lines }
            try await Task.sleep(for: .milliseconds(20))
        }
    }
}
