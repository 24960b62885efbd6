import Foundation
import NetworkAgent
import NetworkAgentCurl
import NetworkAgentGzip
import NetworkAgentToolSupport

#if canImport(Glibc)
import Glibc
#endif

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The memory scenarios of `CurlTransport` (issue 19): `gzip_bomb_curl` and `soak_rss`.
@MainActor
enum CurlMemoryScenarios {
    // MARK: - gzip_bomb_curl

    /// What the bomb inflates to: 1 GiB of zeros.
    static let bombInflatedSize = 1 << 30
    /// The gzip plugin's output limit in `gzip_bomb_curl`: 16 MiB.
    static let bombLimit = 16 << 20
    /// The name of the figure the RSS goal checks.
    nonisolated static let rssGrowth = "RSS growth"

    /// `gzip_bomb_curl`: a gzip body that inflates to 1 GiB, through the gzip plugin limited to 16 MiB of output, on
    /// `CurlTransport`: the time until the call fails with the plugin's limit error, and the RSS growth meanwhile.
    ///
    /// The body (1 GiB of zeros at level 6, about 1 MiB) is made once into the run's temporary folder and served by a
    /// loopback server in a child process of its own, with `Content-Encoding: gzip`. The plugin's ratio limit is
    /// off, so the output limit is what stops the inflation (the ratio limit, 1000:1 by default, would stop it after
    /// 1 MiB). Baseline: the same body fetched through a provider without plugins on the same transport (the
    /// transfer alone).
    static func gzipBomb(_ context: BenchContext) async throws -> Measurement {
        let file = try makeBomb(in: context.temporaryDirectory)
        let compressedSize = (try? FileManager.default.attributesOfItem(atPath: file.path)[.size] as? Int) ?? 0
        let server = try BenchServer.startLoopback(executable: context.executable, gzipBody: file)
        Cleanup.add { server.stop() }
        defer { server.stop() }
        let transport = CurlTransport()
        let limits = Inflater.Limits(maximumOutputBytes: bombLimit, maximumRatio: .infinity)
        let guarded = NetworkAgentProvider<BenchEndpoint>(
            plugins: [.gzip(limits: limits)],
            agent: NetworkAgent(transport: transport)
        )
        let plain = NetworkAgentProvider<BenchEndpoint>(agent: NetworkAgent(transport: transport))
        let endpoint = BenchEndpoint.get(server.baseURL, path: BenchRoutes.gzipBomb)

        /// Fetches the body without the plugin: milliseconds.
        let fetch: @MainActor () async throws -> Double = {
            let clock = ContinuousClock()
            let start = clock.now
            let (data, response) = try await plain.request(endpoint: endpoint)
            let elapsed = start.duration(to: clock.now).seconds * 1_000
            let status = (response as? HTTPURLResponse)?.statusCode ?? 0
            guard status == 200, data.count == compressedSize else {
                throw BenchFailure("the gzip body came back with status \(status), \(data.count) bytes")
            }
            return elapsed
        }
        var growths: [Double] = []
        /// Sends the bomb through the plugin: milliseconds until the limit error; records the RSS growth.
        let bomb: @MainActor () async throws -> Double = {
            ProcessMemory.resetPeak()
            let before = Double(ProcessMemory.kilobytes("VmRSS") ?? 0) / 1024
            let clock = ContinuousClock()
            let start = clock.now
            do {
                let (data, _) = try await guarded.request(endpoint: endpoint)
                throw BenchFailure("the bomb was not stopped: \(data.count) bytes came back")
            } catch let error as NetworkAgentError {
                let elapsed = start.duration(to: clock.now).seconds * 1_000
                guard let gzip = error.underlying as? GzipPlugin.Error, gzip.code == .outputLimitExceeded else {
                    throw BenchFailure("the bomb failed with another error than the output limit: \(error)")
                }
                growths.append((ProcessMemory.peakMiB ?? before) - before)
                return elapsed
            }
        }
        _ = try await fetch()
        // The first call's growth counts (the goal bounds every call): later calls mostly reuse the pages the
        // allocator kept from it.
        _ = try await bomb()
        var measurement = try await Repetitions.interleaved(
            context.options.repetitions,
            baseline: fetch,
            subject: bomb
        )
        measurement.ratio = nil
        measurement.ratios = []
        measurement.figures[rssGrowth] = growths
        measurement.server = "loopback (own)"
        measurement.note =
            String(
                format: "1 GiB of zeros gzipped (%.2f MiB) from a loopback server in a child process; gzip plugin "
                    + "limited to 16 MiB of output (ratio limit off): every call failed with outputLimitExceeded; "
                    + "RSS growth per call (peak minus RSS before it; the untimed first call first): %@ MB; "
                    + "baseline: the same body fetched without the plugin",
                Double(compressedSize) / 1_048_576,
                growths.map { String(format: "%.1f", $0) }.joined(separator: ", ")
            )
        return measurement
    }

    /// Writes 1 GiB of zeros, gzipped at level 6 in 1 MiB steps, to `bomb.json.gz` in `directory` (once per run).
    private static func makeBomb(in directory: URL) throws -> URL {
        let url = directory.appending(path: "bomb.json.gz")
        if FileManager.default.fileExists(atPath: url.path) { return url }
        let partial = directory.appending(path: "bomb.json.gz.partial")
        _ = FileManager.default.createFile(atPath: partial.path, contents: nil)
        let handle = try FileHandle(forWritingTo: partial)
        defer { try? handle.close() }
        var deflater = try Deflater(format: .gzip, level: 6)
        let zeros = Data(count: 1 << 20)
        for _ in 0..<(bombInflatedSize >> 20) {
            let output = try deflater.compress(zeros)
            if !output.isEmpty { try handle.write(contentsOf: output) }
        }
        try handle.write(contentsOf: try deflater.finish())
        try handle.close()
        try FileManager.default.moveItem(at: partial, to: url)
        return url
    }

    // MARK: - soak_rss

    /// `soak_rss`'s requests: 1,000,000 (200,000 in quick mode), after a warm-up of a tenth as many.
    static func soakRequests(quick: Bool) -> Int {
        quick ? 200_000 : 1_000_000
    }

    /// RSS readings during the soak: one after the warm-up, then one after each tenth of the requests.
    static let soakCheckpoints = 10

    /// `soak_rss`: the RSS growth of the process over 1,000,000 GETs (200,000 quick) through the provider without
    /// plugins on `CurlTransport`, 32 in flight, after a warm-up of a tenth as many. Baseline: the growth over the same
    /// number of transfers of ``RawCurlLoop`` (the same libcurl, no Swift layers), after the same warm-up. One run
    /// each (not repeated): the figure is a trend, read at ten checkpoints.
    static func soak(_ context: BenchContext) async throws -> Measurement {
        let server = try await context.server()
        let total = soakRequests(quick: context.options.quick)
        let warmUp = total / 10
        let concurrency = ThroughputComparison.concurrency
        let provider = NetworkAgentProvider<BenchEndpoint>(agent: NetworkAgent(transport: CurlTransport()))
        let request = CoreOverheadScenario.providerGET(
            BenchEndpoint.get(server.baseURL, path: BenchRoutes.plainDocument),
            provider
        )
        let subject = try await growth(total: total, warmUp: warmUp) { count in
            try await LoadGenerator.requestsPerSecond(total: count, concurrency: concurrency, request)
        }
        let raw = try RawCurlLoop(
            url: server.url(BenchRoutes.plainDocument),
            concurrency: concurrency,
            expectedBytes: BenchRoutes.documentSize
        )
        let baseline = try await growth(total: total, warmUp: warmUp) { count in
            try await raw.requestsPerSecond(total: count)
        }
        var measurement = Measurement(value: subject.growth, baseline: baseline.growth)
        measurement.values = subject.checkpoints
        measurement.note =
            "\(total) GETs after \(warmUp) of warm-up, \(concurrency) in flight, one run; RSS (read after malloc_trim) "
            + "growth after warm-up at each tenth: "
            + subject.checkpoints.map { String(format: "%.1f", $0) }.joined(separator: ", ")
            + String(format: " MB (RSS after warm-up %.1f MB, %.0f req/s)", subject.start, subject.rate)
            + "; baseline: raw libcurl loop over as many transfers: "
            + baseline.checkpoints.map { String(format: "%.1f", $0) }.joined(separator: ", ")
            + String(format: " MB (%.0f req/s)", baseline.rate)
        return measurement
    }

    /// What one soak measured: MiB of RSS at the start, the growth at each checkpoint and at the end, the rate.
    private struct Soak {
        var start: Double
        var checkpoints: [Double]
        var growth: Double { checkpoints.last ?? 0 }
        var rate: Double
    }

    private static func growth(
        total: Int,
        warmUp: Int,
        _ run: @MainActor (Int) async throws -> Double
    ) async throws -> Soak {
        _ = try await run(warmUp)
        let start = residentMiB()
        var checkpoints: [Double] = []
        var seconds = 0.0
        let step = total / soakCheckpoints
        for _ in 0..<soakCheckpoints {
            let rate = try await run(step)
            seconds += Double(step) / rate
            checkpoints.append(residentMiB() - start)
        }
        return Soak(start: start, checkpoints: checkpoints, rate: Double(step * soakCheckpoints) / seconds)
    }

    /// VmRSS after `malloc_trim(0)`: the memory in use, without the free pages the allocator keeps (the earlier
    /// scenarios leave tens of MB of them, which would hide a leak of that size).
    private static func residentMiB() -> Double {
        Double(ProcessMemory.residentKilobytesAfterTrim() ?? 0) / 1024
    }
}
