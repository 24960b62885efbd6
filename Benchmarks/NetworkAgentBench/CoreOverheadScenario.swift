import Foundation
import NetworkAgent

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `core_overhead`: 1 KiB GETs per second through a provider without plugins against raw `URLSession.data(for:)`,
/// 32 in flight, on the same server; each side has a fresh session of the default ephemeral configuration.
@MainActor
enum CoreOverheadScenario {
    static func run(_ context: BenchContext) async throws -> Measurement {
        let server = try await context.server()
        let session = URLSession(configuration: .ephemeral)
        defer { session.finishTasksAndInvalidate() }
        let provider = NetworkAgentProvider<BenchEndpoint>(
            agent: NetworkAgent(transport: URLSessionTransport(configuration: .ephemeral))
        )
        return try await ThroughputComparison.measure(
            context,
            baseline: rawGET(server.url(BenchRoutes.plainDocument), session: session),
            subject: providerGET(BenchEndpoint.get(server.baseURL, path: BenchRoutes.plainDocument), provider)
        )
    }

    /// One raw `URLSession.data(for:)` GET of `url`, checked.
    static func rawGET(_ url: URL, session: URLSession) -> @Sendable () async throws -> Void {
        var request = URLRequest(url: url)
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        return { [request] in
            let (data, response) = try await session.data(for: request)
            try BenchRoutes.checkDocument(data, response)
        }
    }

    /// One GET of `endpoint` through `provider`, checked.
    static func providerGET(
        _ endpoint: BenchEndpoint,
        _ provider: NetworkAgentProvider<BenchEndpoint>
    ) -> @Sendable () async throws -> Void {
        {
            let (data, response) = try await provider.request(endpoint: endpoint)
            try BenchRoutes.checkDocument(data, response)
        }
    }
}

/// Request rates of two ways to GET the same document, measured in turns: the scenarios `core_overhead`,
/// `chain_overhead` and `metrics_overhead` differ only in what they compare.
@MainActor
enum ThroughputComparison {
    /// The number of requests in flight.
    static let concurrency = 32

    /// The untimed requests each side sends first: 256.
    static let warmUpRequests = concurrency * 8

    /// The requests per repetition and side: 10,000 (2,000 in quick mode).
    static func requestsPerRepetition(quick: Bool) -> Int {
        quick ? 2_000 : 10_000
    }

    /// Every request one side sends in ``measure(_:baseline:subject:)``, warm-up included.
    static func requestsPerSide(_ options: BenchOptions) -> Int {
        warmUpRequests + options.repetitions * requestsPerRepetition(quick: options.quick)
    }

    /// Warms both sides up (connections, caches), then measures requests per second in interleaved repetitions.
    ///
    /// - Parameters:
    ///   - context: The run's options.
    ///   - baseline: One baseline request.
    ///   - subject: One subject request.
    /// - Returns: Requests per second of each side and their ratio.
    /// - Throws: The first failed request.
    static func measure(
        _ context: BenchContext,
        baseline: @escaping @Sendable () async throws -> Void,
        subject: @escaping @Sendable () async throws -> Void
    ) async throws -> Measurement {
        let total = requestsPerRepetition(quick: context.options.quick)
        _ = try await LoadGenerator.requestsPerSecond(total: warmUpRequests, concurrency: concurrency, baseline)
        _ = try await LoadGenerator.requestsPerSecond(total: warmUpRequests, concurrency: concurrency, subject)
        var measurement = try await Repetitions.interleaved(
            context.options.repetitions,
            baseline: { try await LoadGenerator.requestsPerSecond(total: total, concurrency: concurrency, baseline) },
            subject: { try await LoadGenerator.requestsPerSecond(total: total, concurrency: concurrency, subject) }
        )
        measurement.note = "\(total) requests per repetition and side, \(concurrency) in flight"
        return measurement
    }
}
