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

    /// The requests per repetition and side when both sides are libcurl-fast (tens of thousands per second):
    /// 50,000 (10,000 in quick mode), so that a repetition lasts about as long as a URLSession one.
    static func curlRequestsPerRepetition(quick: Bool) -> Int {
        quick ? 10_000 : 50_000
    }

    /// Every request one side sends in ``measure(_:requests:baseline:subject:)``, warm-up included.
    static func requestsPerSide(_ options: BenchOptions, perRepetition: Int? = nil) -> Int {
        warmUpRequests + options.repetitions * (perRepetition ?? requestsPerRepetition(quick: options.quick))
    }

    /// Warms both sides up (connections, caches), then measures requests per second in interleaved repetitions.
    ///
    /// - Parameters:
    ///   - context: The run's options.
    ///   - requests: The requests per repetition and side; ``requestsPerRepetition(quick:)`` by default.
    ///   - baseline: One baseline request.
    ///   - subject: One subject request.
    /// - Returns: Requests per second of each side and their ratio.
    /// - Throws: The first failed request.
    static func measure(
        _ context: BenchContext,
        requests: Int? = nil,
        baseline: @escaping @Sendable () async throws -> Void,
        subject: @escaping @Sendable () async throws -> Void
    ) async throws -> Measurement {
        let total = requests ?? requestsPerRepetition(quick: context.options.quick)
        return try await measureRuns(
            context,
            requests: total,
            baseline: { total in
                try await LoadGenerator.requestsPerSecond(total: total, concurrency: concurrency, baseline)
            },
            subject: { total in
                try await LoadGenerator.requestsPerSecond(total: total, concurrency: concurrency, subject)
            }
        )
    }

    /// The figure of a measurement holding the subject's client CPU per request of each repetition, in µs.
    nonisolated static let cpuFigure = "cpu_us"
    /// The figure holding the baseline's client CPU per request of each repetition, in µs.
    nonisolated static let baselineCPUFigure = "baseline_cpu_us"

    /// ``measure(_:requests:baseline:subject:)`` for sides that send a whole batch themselves (`curl_overhead`'s
    /// raw libcurl loop): each closure sends the number of requests it is given, 32 in flight, and returns the rate.
    static func measureRuns(
        _ context: BenchContext,
        requests total: Int,
        baseline: @escaping @MainActor (Int) async throws -> Double,
        subject: @escaping @MainActor (Int) async throws -> Double
    ) async throws -> Measurement {
        _ = try await baseline(warmUpRequests)
        _ = try await subject(warmUpRequests)
        var baselineCPU: [Double] = []
        var subjectCPU: [Double] = []
        var measurement = try await Repetitions.interleaved(
            context.options.repetitions,
            baseline: {
                let start = ProcessCPU.seconds
                let rate = try await baseline(total)
                baselineCPU.append((ProcessCPU.seconds - start) / Double(total) * 1_000_000)
                return rate
            },
            subject: {
                let start = ProcessCPU.seconds
                let rate = try await subject(total)
                subjectCPU.append((ProcessCPU.seconds - start) / Double(total) * 1_000_000)
                return rate
            }
        )
        measurement.figures[cpuFigure] = subjectCPU
        measurement.figures[baselineCPUFigure] = baselineCPU
        measurement.note =
            "\(total) requests per repetition and side, \(concurrency) in flight; "
            + String(
                format: "client CPU per request (this process, all threads): %.1f us, baseline %.1f us",
                subjectCPU.median ?? 0,
                baselineCPU.median ?? 0
            )
        return measurement
    }
}

extension ThroughputComparison {
    /// The pairs of ``measureCPUAdded(_:requests:baseline:subject:)``: 30 in quick mode, 50 otherwise.
    static func cpuPairs(quick: Bool) -> Int {
        quick ? 30 : 50
    }

    /// The µs of client CPU per request the subject adds to the baseline, each sending ``concurrency`` at a time.
    ///
    /// After both warm up, `requests` per side go in ``cpuPairs(quick:)`` pairs of short batches (1,000 requests in
    /// quick mode), the two batches of a pair back to back in alternating order; the value is the median of the
    /// pairs' differences. A pair's two batches run within a fifth of a second of each other, so what else the
    /// machine does meanwhile (other processes, where the scheduler puts the bench's and the server's threads) hits
    /// both, and the median leaves out the pairs a burst hit. Three long repetitions, the method before, moved a
    /// row by ±10 µs between runs of the same build, and a plugin that does nothing read −4 to 8 µs.
    ///
    /// - Returns: The measurement (`values`: each pair's difference) and the requests each side sent, warm-up
    ///   included.
    static func measureCPUAdded(
        _ context: BenchContext,
        requests: Int,
        baseline: @escaping @Sendable () async throws -> Void,
        subject: @escaping @Sendable () async throws -> Void
    ) async throws -> (measurement: Measurement, requestsPerSide: Int) {
        let pairs = cpuPairs(quick: context.options.quick)
        let batch = max(concurrency, requests / pairs)
        func run(_ request: @escaping @Sendable () async throws -> Void) async throws -> (cpu: Double, rate: Double) {
            let start = ProcessCPU.seconds
            let rate = try await LoadGenerator.requestsPerSecond(total: batch, concurrency: concurrency, request)
            return ((ProcessCPU.seconds - start) / Double(batch) * 1_000_000, rate)
        }
        _ = try await LoadGenerator.requestsPerSecond(total: warmUpRequests, concurrency: concurrency, baseline)
        _ = try await LoadGenerator.requestsPerSecond(total: warmUpRequests, concurrency: concurrency, subject)
        var baselines: [(cpu: Double, rate: Double)] = []
        var subjects: [(cpu: Double, rate: Double)] = []
        for pair in 0..<pairs {
            if pair.isMultiple(of: 2) {
                baselines.append(try await run(baseline))
                subjects.append(try await run(subject))
            } else {
                subjects.append(try await run(subject))
                baselines.append(try await run(baseline))
            }
        }
        var measurement = Measurement(
            value: nil,
            baseline: baselines.map(\.cpu).median,
            ratio: nil
        )
        measurement.values = zip(subjects, baselines).map { $0.cpu - $1.cpu }
        measurement.value = measurement.values.median
        measurement.ratios = zip(subjects, baselines).map { $0.cpu / $1.cpu }
        measurement.ratio = measurement.ratios.median
        measurement.figures[cpuFigure] = subjects.map(\.cpu)
        measurement.figures[baselineCPUFigure] = baselines.map(\.cpu)
        measurement.note = String(
            format: "%d pairs of %d-request batches per side, %d in flight; client CPU per request (this process, all "
                + "threads): %.1f us, baseline %.1f us; request rates (medians): subject %.0f req/s, baseline %.0f req/s",
            pairs,
            batch,
            concurrency,
            subjects.map(\.cpu).median ?? 0,
            baselines.map(\.cpu).median ?? 0,
            subjects.map(\.rate).median ?? 0,
            baselines.map(\.rate).median ?? 0
        )
        return (measurement, warmUpRequests + pairs * batch)
    }
}

/// The CPU time of this process, all threads, user and system.
enum ProcessCPU {
    /// Seconds of CPU since the process started (`CLOCK_PROCESS_CPUTIME_ID`).
    static var seconds: Double {
        var time = timespec()
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1_000_000_000
    }
}
