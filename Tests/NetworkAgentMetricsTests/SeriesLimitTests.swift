import Foundation
import NetworkAgent
import Testing

@testable import NetworkAgentMetrics

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The registry files an observation under its own labels while a family holds fewer label sets than the limit, or
/// when the family already has that label set, and under `overflow` otherwise: each family on its own (a request
/// without a known body size, headers or transfer timings adds no series to those families).
@Suite struct SeriesLimitTests {
    /// One finished request: its route, whether its request body size is known, and whether it has timings.
    struct Request {
        let route: String
        let sent: Bool
        let timed: Bool
        let status: Int
    }

    static let requests: [Request] = [
        Request(route: "a", sent: true, timed: false, status: 200),
        Request(route: "b", sent: false, timed: true, status: 200),
        Request(route: "a", sent: true, timed: true, status: 500),
        Request(route: "c", sent: true, timed: false, status: 200),
        Request(route: "d", sent: false, timed: true, status: 200),
        Request(route: "b", sent: true, timed: false, status: 404),
        Request(route: "overflow", sent: true, timed: true, status: 200),
        Request(route: "e", sent: true, timed: true, status: 200),
        Request(route: "c", sent: false, timed: true, status: 200),
        Request(route: "a", sent: false, timed: false, status: 200),
    ]

    /// The rule, written out: the label set each observation of a family is filed under.
    struct Family {
        let limit: Int
        var counts: [[String]: Int] = [:]

        mutating func file(_ labels: [String], overflow: [String]) {
            let key = counts.count < limit || counts[labels] != nil ? labels : overflow
            counts[key, default: 0] += 1
        }
    }

    @Test(arguments: [1, 2, 3, 4, 10])
    func everyFamilyFoldsPastItsOwnLimit(limit: Int) throws {
        let registry = MetricsRegistry(configuration: MetricsConfiguration(maximumSeriesPerMetric: limit))
        let timings = HTTPTransferTimings(
            nameLookup: .milliseconds(1),
            connect: .milliseconds(2),
            preTransfer: .milliseconds(3),
            firstByte: .milliseconds(5),
            total: .milliseconds(8)
        )
        let route2 = ["overflow", "overflow"]
        let url = try #require(URL(string: "http://example.com/"))
        var requests = Family(limit: limit)
        var durations = Family(limit: limit)
        var sentBytes = Family(limit: limit)
        var receivedBytes = Family(limit: limit)
        var headers = Family(limit: limit)
        var phases = Family(limit: limit)
        var windows = Family(limit: limit)
        var retries = Family(limit: limit)
        for request in Self.requests {
            let labels = MetricsLabels(route: request.route, method: "GET")
            registry.handle(.requestStarted(labels))
            if request.timed {
                registry.handle(.responseHeaders(labels, seconds: 0.004))
                headers.file([request.route, "GET"], overflow: route2)
            }
            registry.handle(.event(labels, NetworkAgentEvent(.retryScheduled(delay: .zero))))
            retries.file([request.route, "GET"], overflow: route2)
            let measurement = MetricsMeasurement(
                labels: labels,
                statusCode: request.status,
                outcome: MetricsOutcome(
                    response: try #require(
                        HTTPURLResponse(url: url, statusCode: request.status, httpVersion: nil, headerFields: nil)
                    )
                ),
                duration: .milliseconds(8),
                requestBodyBytes: request.sent ? 10 : nil,
                responseBodyBytes: 20,
                transferTimings: request.timed ? timings : nil
            )
            registry.handle(.requestFinished(measurement))
            requests.file(
                [request.route, "GET", measurement.statusClass, measurement.outcome.description],
                overflow: ["overflow", "overflow", "overflow", "overflow"]
            )
            durations.file([request.route, "GET"], overflow: route2)
            if request.sent { sentBytes.file([request.route, "GET"], overflow: route2) }
            receivedBytes.file([request.route, "GET"], overflow: route2)
            if request.timed { phases.file([request.route, "GET"], overflow: route2) }
            windows.file([request.route, "GET"], overflow: route2)
        }
        let snapshot = registry.snapshot()
        func counts(_ name: String, _ labelNames: [String]) -> [[String]: Int] {
            var counts: [[String]: Int] = [:]
            for sample in snapshot.family(name)?.samples ?? [] {
                counts[labelNames.map { sample.labels[$0] ?? "-" }] = Int(sample.value)
            }
            return counts
        }
        let route = ["route", "method"]
        #expect(counts("networkagent_requests_total", route + ["status_class", "outcome"]) == requests.counts)
        #expect(counts("networkagent_request_duration_seconds", route) == durations.counts)
        #expect(counts("networkagent_request_body_bytes", route) == sentBytes.counts)
        #expect(counts("networkagent_response_body_bytes", route) == receivedBytes.counts)
        #expect(counts("networkagent_response_headers_seconds", route) == headers.counts)
        #expect(counts("networkagent_retries_total", route) == retries.counts)
        // Five phases happened (no TLS): each route's phases are one series of the limit.
        var phaseCounts: [[String]: Int] = [:]
        for (key, count) in counts("networkagent_transfer_phase_seconds", route + ["phase"]) {
            #expect(phaseCounts[Array(key.prefix(2))].map { $0 == count } ?? true)
            phaseCounts[Array(key.prefix(2))] = count
        }
        #expect(phaseCounts == phases.counts)
        var windowCounts: [[String]: Int] = [:]
        for latency in snapshot.latency { windowCounts[[latency.route ?? "-", latency.method ?? "-"]] = latency.count }
        #expect(windowCounts == windows.counts)
        #expect(snapshot.overallLatency.count == Self.requests.count)
    }

    /// The registry's conversion of a duration to seconds is the package's (`timeInterval`), bit for bit.
    @Test func secondsAreThePackagesConversion() {
        var durations: [Duration] = [
            .zero, .nanoseconds(1), .microseconds(312), .milliseconds(999), .seconds(1), .seconds(1) - .nanoseconds(1),
            .seconds(3.25), .seconds(-0.5), .nanoseconds(-1), .seconds(Int64.max), .zero - .seconds(Int64.max),
            Duration(secondsComponent: 0, attosecondsComponent: 1),
            Duration(secondsComponent: 0, attosecondsComponent: 999_999_999_999_999_999),
        ]
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2_000 {
            durations.append(.nanoseconds(Int64.random(in: 0..<2_000_000_000, using: &generator)))
            durations.append(
                Duration(
                    secondsComponent: 0,
                    attosecondsComponent: Int64.random(in: 0..<1_000_000_000_000_000_000, using: &generator)
                )
            )
        }
        for duration in durations {
            #expect(duration.metricsSeconds.bitPattern == duration.timeInterval.bitPattern, "\(duration)")
        }
    }
}

/// The registry's one pass over a transfer's phases gives what each phase's `duration(in:)` gives.
@Suite struct PhasePassTests {
    @Test func onePassEqualsEachPhasesDuration() {
        var generator = SystemRandomNumberGenerator()
        let choices: [Duration?] = [
            nil, .zero, .nanoseconds(-5), .microseconds(10), .microseconds(50), .milliseconds(2), .seconds(1),
            .seconds(2.5), .nanoseconds(1),
        ]
        for _ in 0..<3_000 {
            func pick() -> Duration? {
                Bool.random(using: &generator)
                    ? choices.randomElement(using: &generator) ?? nil
                    : .nanoseconds(Int64.random(in: -10..<3_000_000_000, using: &generator))
            }
            let timings = HTTPTransferTimings(
                nameLookup: pick(),
                connect: pick(),
                tlsHandshake: pick(),
                preTransfer: pick(),
                firstByte: pick(),
                total: pick()
            )
            var expected: [Int: UInt64] = [:]
            for (index, phase) in MetricsTransferPhase.inOrder.enumerated() {
                if let duration = phase.duration(in: timings) { expected[index] = duration.timeInterval.bitPattern }
            }
            var found: [Int: UInt64] = [:]
            MetricsTransferPhase.forEachDuration(in: timings) { index, seconds in found[index] = seconds.bitPattern }
            #expect(found == expected, "\(timings)")
        }
    }
}
