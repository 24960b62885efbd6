import Foundation
import NetworkAgent
import NetworkAgentMetrics
import NetworkAgentTestServer
import NetworkAgentTestSupport
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The per-phase histogram `networkagent_transfer_phase_seconds`, fed by the timings a transport puts on its
/// response, and its absence with URLSession.
@Suite struct TransferPhaseTests {
    static let family = "networkagent_transfer_phase_seconds"

    func phases(_ timings: HTTPTransferTimings) -> [MetricsTransferPhase: Duration] {
        var result: [MetricsTransferPhase: Duration] = [:]
        for phase in MetricsTransferPhase.allCases {
            if let duration = phase.duration(in: timings) { result[phase] = duration }
        }
        return result
    }

    @Test func phasesOfANewTLSConnectionAreDifferencesOfTheCumulativeTimes() {
        #expect(
            phases(.newTLSConnection) == [
                .dns: .milliseconds(2), .connect: .milliseconds(3), .tls: .milliseconds(10),
                .pretransfer: .microseconds(200), .firstByte: .milliseconds(40), .transfer: .milliseconds(5),
            ]
        )
        #expect(
            MetricsTransferPhase.allCases.map(\.rawValue) == [
                "dns", "connect", "tls", "pretransfer", "first_byte", "transfer",
            ]
        )
    }

    @Test func phasesThatDidNotHappenAreLeftOut() {
        // A reused connection: libcurl reports zero for lookup, connect and handshake.
        #expect(
            phases(.reusedConnection) == [
                .pretransfer: .microseconds(50), .firstByte: .milliseconds(3), .transfer: .microseconds(50),
            ]
        )
        // Plain http on a new connection: no handshake, pre-transfer runs from the connect.
        let plain = HTTPTransferTimings(
            nameLookup: .microseconds(10),
            connect: .microseconds(110),
            tlsHandshake: .zero,
            preTransfer: .microseconds(120),
            firstByte: .microseconds(1_120)
        )
        #expect(
            phases(plain) == [
                .dns: .microseconds(10), .connect: .microseconds(100), .pretransfer: .microseconds(10),
                .firstByte: .milliseconds(1),
            ]
        )
        #expect(phases(HTTPTransferTimings()).isEmpty)
    }

    @Test func aPhaseEndingBeforeAnEarlierOneCountsAsZero() {
        let inconsistent = HTTPTransferTimings(connect: .milliseconds(5), preTransfer: .milliseconds(4))
        #expect(phases(inconsistent) == [.connect: .milliseconds(5), .pretransfer: .zero])
    }

    @Test func aBufferedRequestRecordsEachPhaseInItsBucket() async throws {
        let registry = MetricsRegistry()
        let agent = NetworkAgent(transport: TimedTransport(timings: .newTLSConnection))
        let provider = NetworkAgentProvider<PlainEndpoint>(plugins: [.metrics(registry)], agent: agent)
        let endpoint = PlainEndpoint(baseURL: try #require(URL(string: "https://api.example")), path: "/x")
        _ = try await provider.request(endpoint: endpoint)
        _ = try await provider.request(endpoint: endpoint)

        let snapshot = registry.snapshot()
        let expected: [(String, Double, Double)] = [
            // phase, seconds, the smallest default bound at or above it
            ("dns", 0.002, 0.0025), ("connect", 0.003, 0.005), ("tls", 0.010, 0.01), ("pretransfer", 0.0002, 0.00025),
            ("first_byte", 0.040, 0.05), ("transfer", 0.005, 0.005),
        ]
        let bounds = MetricsConfiguration.defaultPhaseBuckets
        for (phase, seconds, bound) in expected {
            let histogram = try #require(
                snapshot.histogram(Self.family, ["route": "PlainEndpoint", "method": "GET", "phase": phase]),
                "\(phase)"
            )
            #expect(histogram.count == 2, "\(phase)")
            #expect(abs(histogram.sum - 2 * seconds) < 1e-9, "\(phase)")
            #expect(histogram.buckets.map(\.upperBound) == bounds)
            for bucket in histogram.buckets {
                #expect(
                    bucket.cumulativeCount == (bucket.upperBound >= bound ? 2 : 0),
                    "\(phase) le \(bucket.upperBound)"
                )
            }
        }
        #expect(snapshot.family(Self.family)?.samples.count == 6)
        #expect(snapshot.family(Self.family)?.labelNames == ["route", "method", "phase"])
    }

    /// Handlers of the attempts plugin get each attempt's timings, but one registry given both plugins records a
    /// request's phases once.
    @Test func attemptsCarryTheirTimingsButPhasesAreRecordedOncePerRequest() async throws {
        final class Seen: MetricsHandler {
            let timings = Locked<[HTTPTransferTimings?]>([])
            func handle(_ observation: MetricsObservation) {
                if case .attemptFinished(let measurement) = observation {
                    timings.withLock { $0.append(measurement.transferTimings) }
                }
            }
        }
        let registry = MetricsRegistry()
        let seen = Seen()
        let agent = NetworkAgent(transport: TimedTransport(timings: .reusedConnection))
        let provider = NetworkAgentProvider<PlainEndpoint>(
            plugins: [.metrics(registry), .metricsAttempts(registry, forwardingTo: [seen])],
            agent: agent
        )
        _ = try await provider.request(
            endpoint: PlainEndpoint(baseURL: try #require(URL(string: "https://api.example")), path: "/x")
        )
        #expect(seen.timings.withLock { $0 } == [.reusedConnection])
        let counts = registry.snapshot().family(Self.family)?.samples.map(\.value)
        #expect(counts == [1, 1, 1])
    }

    @Test func aStreamRecordsItsPhasesAtTheEndWithoutTransfer() async throws {
        var headersOnly = HTTPTransferTimings.reusedConnection
        headersOnly.total = nil  // a streamed response's timings are known at its headers
        let registry = MetricsRegistry()
        let agent = NetworkAgent(transport: TimedTransport(timings: headersOnly))
        let provider = NetworkAgentProvider<PlainEndpoint>(plugins: [.metrics(registry)], agent: agent)
        let endpoint = PlainEndpoint(baseURL: try #require(URL(string: "https://api.example")), path: "/s")
        let stream = try await provider.stream(endpoint: endpoint)
        #expect(registry.snapshot().family(Self.family)?.samples.isEmpty == true)
        for try await _ in stream.body {}
        let phases = registry.snapshot().family(Self.family)?.samples.compactMap { $0.labels["phase"] }
        #expect(phases == ["first_byte", "pretransfer"])
    }

    @Test func failedStatusesRecordTheirPhasesToo() async throws {
        let registry = MetricsRegistry()
        var transport = TimedTransport(timings: .reusedConnection)
        transport.statusCode = 503
        let provider = NetworkAgentProvider<PlainEndpoint>(
            plugins: [.metrics(registry), .validate()],
            agent: NetworkAgent(transport: transport)
        )
        let endpoint = PlainEndpoint(baseURL: try #require(URL(string: "https://api.example")), path: "/x")
        await #expect(throws: NetworkAgentError.self) { try await provider.request(endpoint: endpoint) }
        #expect(registry.snapshot().family(Self.family)?.samples.count == 3)
    }

    @Test func customBucketsAreUsed() async throws {
        let registry = MetricsRegistry(configuration: MetricsConfiguration(phaseBuckets: [0.01, 0.001, .nan]))
        let agent = NetworkAgent(transport: TimedTransport(timings: .reusedConnection))
        let provider = NetworkAgentProvider<PlainEndpoint>(plugins: [.metrics(registry)], agent: agent)
        _ = try await provider.request(
            endpoint: PlainEndpoint(baseURL: try #require(URL(string: "https://api.example")), path: "/x")
        )
        let histogram = try #require(
            registry.snapshot().histogram(
                Self.family,
                ["route": "PlainEndpoint", "method": "GET", "phase": "first_byte"]
            )
        )
        #expect(histogram.buckets.map(\.upperBound) == [0.001, 0.01])
        #expect(histogram.buckets.map(\.cumulativeCount) == [0, 1])
    }

    @Test func theSeriesLimitCountsRoutesAndFoldsTheRestIntoOverflow() async throws {
        let registry = MetricsRegistry(configuration: MetricsConfiguration(maximumSeriesPerMetric: 1))
        let agent = NetworkAgent(transport: TimedTransport(timings: .reusedConnection))
        let provider = NetworkAgentProvider<PokeApi>(plugins: [.metrics(registry)], agent: agent)
        let base = try #require(URL(string: "https://api.example"))
        _ = try await provider.request(endpoint: .pokemon(base: base, id: 1))
        _ = try await provider.request(endpoint: .list(base: base))
        _ = try await provider.request(endpoint: .pokemon(base: base, id: 2))
        let samples = registry.snapshot().family(Self.family)?.samples ?? []
        let counts = samples.map { "\($0.labels["route"] ?? "?") \($0.labels["phase"] ?? "?") \(Int($0.value))" }
        #expect(
            counts == [
                "/pokemon/{id} first_byte 2", "/pokemon/{id} pretransfer 2", "/pokemon/{id} transfer 2",
                "overflow first_byte 1", "overflow pretransfer 1", "overflow transfer 1",
            ]
        )
    }

    /// Over the wire on the run's transport: URLSession measures no phase, so the family has no series; libcurl
    /// measures them, so a fresh connection to the loopback server shows its connect, server wait and download.
    @Test func overTheWireThePhasesAreThoseTheTransportMeasures() async throws {
        let server = try LoopbackServer { _ in .text("hello") }
        defer { server.stop() }
        let registry = MetricsRegistry()
        let provider = NetworkAgentProvider<LoadApi>(
            plugins: [.metrics(registry), .metricsAttempts(registry)],
            agent: NetworkAgent(transport: TestTransport.make())
        )
        _ = try await provider.request(endpoint: .fast(base: server.baseURL, id: 1))
        let stream = try await provider.stream(endpoint: .fast(base: server.baseURL, id: 2))
        for try await _ in stream.body {}

        let snapshot = registry.snapshot()
        #expect(snapshot.total("networkagent_requests_total") == 2)
        let samples = snapshot.family(Self.family)?.samples ?? []
        let text = registry.prometheusText()
        #expect(text.contains("# TYPE \(Self.family) histogram"))
        switch TestTransport.kind {
        case .urlSession:
            #expect(samples.isEmpty)
            #expect(!text.contains("\(Self.family)_bucket"))
            #expect(!text.contains("\(Self.family)_count"))
        case .curl:
            // Both requests waited for their first byte; only the buffered one has a transfer phase (a stream's
            // timings are taken at its headers); the first one opened the connection.
            func count(_ phase: String) -> UInt64 {
                snapshot.histogram(Self.family, ["route": "fast", "method": "GET", "phase": phase])?.count ?? 0
            }
            #expect(count("first_byte") == 2)
            #expect(count("transfer") == 1)
            #expect(count("connect") >= 1)
            #expect(count("tls") == 0)
        }
    }
}
