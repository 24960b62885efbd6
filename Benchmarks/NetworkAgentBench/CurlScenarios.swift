import Foundation
import NetworkAgent
import NetworkAgentCurl

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The request-rate scenarios of `CurlTransport` (issue 19): `curl_speedup`, `curl_overhead`,
/// `chain_overhead_curl` and `h2_multiplex`.
@MainActor
enum CurlScenarios {
    /// `curl_speedup`: the provider without plugins on `CurlTransport` against raw `URLSession.data(for:)`.
    static func speedup(_ context: BenchContext) async throws -> Measurement {
        let server = try await context.server()
        let session = URLSession(configuration: .ephemeral)
        defer { session.finishTasksAndInvalidate() }
        let provider = NetworkAgentProvider<BenchEndpoint>(agent: NetworkAgent(transport: CurlTransport()))
        var measurement = try await ThroughputComparison.measure(
            context,
            baseline: CoreOverheadScenario.rawGET(server.url(BenchRoutes.plainDocument), session: session),
            subject: CoreOverheadScenario.providerGET(
                BenchEndpoint.get(server.baseURL, path: BenchRoutes.plainDocument),
                provider
            )
        )
        measurement.note = [
            "baseline: raw URLSession.data(for:), ephemeral session; subject: provider without plugins on CurlTransport",
            measurement.note,
        ].compactMap { $0 }.joined(separator: "; ")
        return measurement
    }

    /// `curl_overhead`: the provider without plugins on `CurlTransport` against ``RawCurlLoop``, the same libcurl
    /// driven directly.
    static func overhead(_ context: BenchContext) async throws -> Measurement {
        let server = try await context.server()
        let concurrency = ThroughputComparison.concurrency
        let raw = try RawCurlLoop(
            url: server.url(BenchRoutes.plainDocument),
            concurrency: concurrency,
            expectedBytes: BenchRoutes.documentSize
        )
        let provider = NetworkAgentProvider<BenchEndpoint>(agent: NetworkAgent(transport: CurlTransport()))
        let request = CoreOverheadScenario.providerGET(
            BenchEndpoint.get(server.baseURL, path: BenchRoutes.plainDocument),
            provider
        )
        var measurement = try await ThroughputComparison.measureRuns(
            context,
            requests: ThroughputComparison.curlRequestsPerRepetition(quick: context.options.quick),
            baseline: { total in try await raw.requestsPerSecond(total: total) },
            subject: { total in
                try await LoadGenerator.requestsPerSecond(total: total, concurrency: concurrency, request)
            }
        )
        measurement.note = [
            "baseline: raw libcurl, one thread, one multi handle, \(concurrency) easy handles reused, "
                + "every transfer checked (status 200, 1024 bytes); subject: provider without plugins on CurlTransport",
            measurement.note,
        ].compactMap { $0 }.joined(separator: "; ")
        let added = microsecondsPerRequest(measurement, what: "the provider and CurlTransport add")
        measurement.note? += added
        return measurement
    }

    /// `chain_overhead_curl`: `chain_overhead`'s full chain against the provider without plugins, both on
    /// `CurlTransport`.
    static func chain(_ context: BenchContext) async throws -> Measurement {
        let server = try await context.server()
        let directory = try PluginOverheadScenarios.scratchDirectory(context, named: "chain-curl-cache")
        defer { try? FileManager.default.removeItem(at: directory) }
        let chain = try FullChain(cacheDirectory: directory, transport: CurlTransport())
        let plain = NetworkAgentProvider<BenchEndpoint>(agent: NetworkAgent(transport: CurlTransport()))
        let requests = ThroughputComparison.curlRequestsPerRepetition(quick: context.options.quick)
        var measurement = try await ThroughputComparison.measure(
            context,
            requests: requests,
            baseline: CoreOverheadScenario.providerGET(
                BenchEndpoint.get(server.baseURL, path: BenchRoutes.noStoreDocument),
                plain
            ),
            subject: chain.request(server)
        )
        try chain.verify(requests: ThroughputComparison.requestsPerSide(context.options, perRepetition: requests))
        measurement.note = [
            FullChain.description + "; baseline: the provider without plugins; both on CurlTransport",
            measurement.note,
        ].compactMap { $0 }.joined(separator: "; ")
        let added = microsecondsPerRequest(measurement, what: "the chain adds")
        measurement.note? += added
        return measurement
    }

    /// `; <what> X us per request (1/subject - 1/baseline, medians)`.
    private static func microsecondsPerRequest(_ measurement: Measurement, what: String) -> String {
        guard let value = measurement.value, let baseline = measurement.baseline, value > 0, baseline > 0 else {
            return ""
        }
        let added = (1 / value - 1 / baseline) * 1_000_000
        return String(format: "; %@ %.1f us per request (1/value - 1/baseline of the medians)", what, added)
    }

    // MARK: - h2_multiplex

    /// The requests in flight of `h2_multiplex`.
    static let multiplexConcurrency = 256

    /// `h2_multiplex`: 256 GETs in flight over HTTPS, `CurlTransport` asking for HTTP/2 (one connection,
    /// multiplexed) against `CurlTransport` limited to HTTP/1.1 with its default connection limit.
    ///
    /// Both fetch ``BenchRoutes/countedDocument``, which nginx logs with the connection's serial number and
    /// protocol: the note says how many connections each side used, from that log.
    static func multiplex(_ context: BenchContext) async throws -> Measurement {
        let server = try await context.server()
        guard let tls = server.tls else {
            return .notRun("needs nginx's HTTPS port: \(server.tlsUnavailableReason ?? "none")")
        }
        let log = tls.directory.appending(path: "counted.log")
        // The default settings: up to 1000 streams on a connection (maximumStreamsPerConnection), within nginx's 512.
        let h2 = CurlTransport(configuration: .init(caBundle: tls.certificateAuthority, httpVersion: .http2))
        let h1 = CurlTransport(
            configuration: .init(caBundle: tls.certificateAuthority, httpVersion: .http1)
        )
        let endpoint = BenchEndpoint.get(tls.baseURL, path: BenchRoutes.countedDocument)
        let subject = protocolCheckedGET(endpoint, NetworkAgentProvider(agent: NetworkAgent(transport: h2)), "HTTP/2.0")
        let baseline = protocolCheckedGET(
            endpoint,
            NetworkAgentProvider(agent: NetworkAgent(transport: h1)),
            "HTTP/1.1"
        )
        let total = multiplexConcurrency * (context.options.quick ? 8 : 40)
        let concurrency = multiplexConcurrency
        var measurement = try await ThroughputComparison.measureRuns(
            context,
            requests: total,
            baseline: { total in
                try await LoadGenerator.requestsPerSecond(total: total, concurrency: concurrency, baseline)
            },
            subject: { total in
                try await LoadGenerator.requestsPerSecond(total: total, concurrency: concurrency, subject)
            }
        )
        let connections = try connectionsByProtocol(in: log)
        let h2Connections = connections["HTTP/2.0"] ?? 0
        let h1Connections = connections["HTTP/1.1"] ?? 0
        measurement.note =
            "HTTPS to nginx, \(concurrency) GETs in flight, \(total) per repetition and side; subject: CurlTransport "
            + "asking for HTTP/2 with its default settings (\(h2Connections) connection"
            + "\(h2Connections == 1 ? "" : "s") used, from nginx's log); "
            + "baseline: CurlTransport with HTTP/1.1 and its default limit of "
            + "\(CurlTransport.Configuration.defaultMaximumConnectionsPerHost) connections per host "
            + "(\(h1Connections) used); every answer checked for its protocol (X-Protocol)"
        return measurement
    }

    /// One GET through `provider`, checked: the document, and the protocol nginx says it spoke.
    private static func protocolCheckedGET(
        _ endpoint: BenchEndpoint,
        _ provider: NetworkAgentProvider<BenchEndpoint>,
        _ expected: String
    ) -> @Sendable () async throws -> Void {
        {
            let (data, response) = try await provider.request(endpoint: endpoint)
            try BenchRoutes.checkDocument(data, response)
            let spoken = (response as? HTTPURLResponse)?.value(forHTTPHeaderField: "X-Protocol")
            guard spoken == expected else {
                throw BenchFailure("expected \(expected), nginx says it spoke \(spoken ?? "nothing")")
            }
        }
    }

    /// The distinct connections in nginx's `counted.log` (`<connection> <protocol> <uri>` per line), by protocol.
    private static func connectionsByProtocol(in log: URL) throws -> [String: Int] {
        let text = try String(contentsOf: log, encoding: .utf8)
        var connections: [String: Set<Substring>] = [:]
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: " ")
            guard fields.count >= 2 else { continue }
            connections[String(fields[1]), default: []].insert(fields[0])
        }
        return connections.mapValues(\.count)
    }
}
