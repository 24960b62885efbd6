import Foundation
import NetworkAgent
import NetworkAgentCircuitBreaker
import NetworkAgentCurl
import NetworkAgentRetry
import NetworkAgentTestServer

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `overload_amplification`, `breaker_recovery` and `breaker_overhead`: what the retry budget and the circuit
/// breaker do for an origin in trouble, and what the breaker costs a healthy call. Each run starts its own
/// loopback origin in this process, whose health the scenario switches.
@MainActor
enum ResilienceScenarios {
    /// An origin that answers 503 to everything until healed, counting requests in time buckets.
    final class Origin: Sendable {
        let healthy: Locked<Bool>
        let requests: Locked<Int>
        /// Requests per ``bucket`` since the origin started.
        let timeline: Locked<[Int]>
        static let bucket: Duration = .milliseconds(100)
        let server: LoopbackServer

        init() throws {
            let healthy = Locked(false)
            let requests = Locked(0)
            let timeline = Locked<[Int]>([])
            let start = ContinuousClock.now
            server = try LoopbackServer { _ in
                requests.withLock { $0 += 1 }
                let index = Int((ContinuousClock.now - start) / Origin.bucket)
                timeline.withLock { line in
                    if line.count <= index { line += Array(repeating: 0, count: index + 1 - line.count) }
                    line[index] += 1
                }
                return healthy.withLock { $0 } ? .text("ok") : .text("down", status: 503)
            }
            self.healthy = healthy
            self.requests = requests
            self.timeline = timeline
        }

        var endpoint: BenchEndpoint { BenchEndpoint.get(server.baseURL, path: "/item") }
    }

    /// The calls each caller starts per second, whatever happened to its earlier calls (open loop: demand does not
    /// drop because the origin is slow, as with real users).
    nonisolated static let callsPerCallerPerSecond = 10
    nonisolated static let callers = 64

    /// What one configuration of `overload_amplification` saw.
    struct Run {
        var calls = 0
        var originRequests = 0
        /// Calls started and origin requests after the breaker first opened.
        var callsAfterOpen = 0
        var requestsAfterOpen = 0
        var timeline: [Int] = []
    }

    /// `overload_amplification`: 64 callers, each starting 10 calls per second for a fixed time, against an origin
    /// that answers 503 to everything; the retry plugin with its default policy. Value: origin requests per call
    /// with the default budget; baseline: without a budget; figure `breaker_req_per_call`: with budget and breaker,
    /// counted from the moment the breaker opened.
    static func amplification(_ context: BenchContext) async throws -> Measurement {
        let duration: Duration = context.options.quick ? .seconds(3) : .seconds(10)
        var withoutBudget: [Double] = []
        var withBudget: [Double] = []
        var withBreaker: [Double] = []
        var timelines: [(String, [Int])] = []
        for repetition in 0..<context.options.repetitions {
            let none = try await amplificationRun(duration: duration, budget: nil, breaker: false)
            let budget = try await amplificationRun(duration: duration, budget: .default, breaker: false)
            let breaker = try await amplificationRun(duration: duration, budget: .default, breaker: true)
            withoutBudget.append(Double(none.originRequests) / Double(max(1, none.calls)))
            withBudget.append(Double(budget.originRequests) / Double(max(1, budget.calls)))
            withBreaker.append(Double(breaker.requestsAfterOpen) / Double(max(1, breaker.callsAfterOpen)))
            if repetition == 0 {
                timelines = [
                    ("retry without budget", none.timeline), ("retry with the default budget", budget.timeline),
                    ("budget + circuit breaker", breaker.timeline),
                ]
            }
        }
        var measurement = Measurement(baseline: withoutBudget, subject: withBudget)
        measurement.figures[breakerFigure] = withBreaker
        if let path = context.options.svgPath {
            try LoadFigure.svg(timelines, bucket: Origin.bucket, callsPerSecond: callers * callsPerCallerPerSecond)
                .write(toFile: path, atomically: true, encoding: .utf8)
            log("overload_amplification: wrote \(path)")
        }
        measurement.note =
            "\(callers) callers x \(callsPerCallerPerSecond) calls/s for \(duration) on CurlTransport, origin 503s; "
            + "baseline: no budget (req/call); \(breakerFigure) median "
            + String(format: "%.3f", withBreaker.median ?? .nan)
        return measurement
    }

    nonisolated static let breakerFigure = "breaker_req_per_call"

    /// One configuration of `overload_amplification`.
    static func amplificationRun(
        duration: Duration,
        budget: RetryPlugin.RetryBudget?,
        breaker: Bool
    ) async throws
        -> Run
    {
        let origin = try Origin()
        defer { origin.server.stop() }
        let transport = CurlTransport()
        var plugins: [any NetworkAgentPlugin] = [.retry(.init(budget: budget))]
        if breaker { plugins.append(.circuitBreaker()) }
        let provider = NetworkAgentProvider<BenchEndpoint>(plugins: plugins, agent: NetworkAgent(transport: transport))
        let endpoint = origin.endpoint
        let counts = Locked(Run())
        let opened = Locked(false)
        let observer: NetworkAgentEvents.Observer = { event in
            guard case .circuitStateChanged(_, _, .open) = event.kind else { return }
            let first = opened.withLock { opened in
                defer { opened = true }
                return !opened
            }
            if first {
                let requests = origin.requests.withLock { $0 }
                counts.withLock { $0.requestsAfterOpen = -requests }
            }
        }
        let period = Duration.seconds(1) / callsPerCallerPerSecond
        let end = ContinuousClock.now + duration
        await withTaskGroup(of: Void.self) { callers in
            for caller in 0..<Self.callers {
                callers.addTask {
                    await withTaskGroup(of: Void.self) { calls in
                        var next = ContinuousClock.now + period * (Double(caller) / Double(Self.callers))
                        while next < end {
                            try? await Task.sleep(until: next, clock: .continuous)
                            next += period
                            let afterOpen = opened.withLock { $0 }
                            counts.withLock { run in
                                run.calls += 1
                                if afterOpen { run.callsAfterOpen += 1 }
                            }
                            calls.addTask {
                                _ = try? await NetworkAgentEvents.observing(observer) {
                                    try await provider.request(endpoint: endpoint)
                                }
                            }
                        }
                    }
                }
            }
        }
        var run = counts.withLock { $0 }
        run.originRequests = origin.requests.withLock { $0 }
        if opened.withLock({ $0 }) { run.requestsAfterOpen += run.originRequests } else { run.requestsAfterOpen = 0 }
        run.timeline = origin.timeline.withLock { $0 }
        return run
    }

    /// `breaker_recovery`: the breaker (open interval 1 s, jitter 10 %, 10 probes, 20 calls minimum) opens on an
    /// origin answering 503; the origin heals 20 ms later. Value: time from healing to the first successful call;
    /// baseline: the open interval as drawn (jitter included) plus that call's own round trip (the goal's bound); count
    /// `failures after close`: calls that started after the breaker closed and did not get a 200.
    static func recovery(_ context: BenchContext) async throws -> Measurement {
        var values: [Double] = []
        var bounds: [Double] = []
        var failures: [Int] = []
        for _ in 0..<context.options.repetitions {
            let (value, bound, failed) = try await recoveryRun()
            values.append(value)
            bounds.append(bound)
            failures.append(failed)
        }
        var measurement = Measurement(baseline: bounds, subject: values)
        measurement.counts["failures after close"] = failures
        measurement.note =
            "open interval 1 s + up to 10 % jitter, 10 probes, 16 callers every 5 ms on CurlTransport; baseline: "
            + "the open interval as drawn + the first success (started after healing)'s round trip (ms)"
        return measurement
    }

    static func recoveryRun() async throws -> (value: Double, bound: Double, failuresAfterClose: Int) {
        let origin = try Origin()
        defer { origin.server.stop() }
        let transport = CurlTransport()
        let breaker = CircuitBreakerPlugin(
            configuration: .init(window: .count(20), minimumCalls: 20, openInterval: .seconds(1), probeCalls: 10)
        )
        let provider = NetworkAgentProvider<BenchEndpoint>(
            plugins: [breaker],
            agent: NetworkAgent(transport: transport)
        )
        let endpoint = origin.endpoint
        let clock = ContinuousClock()
        struct State {
            var openedAt: ContinuousClock.Instant?
            var openUntil: ContinuousClock.Instant?
            var healedAt: ContinuousClock.Instant?
            var closedAt: ContinuousClock.Instant?
            var firstSuccess: (start: ContinuousClock.Instant, end: ContinuousClock.Instant)?
            var failuresAfterClose = 0
        }
        let state = Locked(State())
        let observer: NetworkAgentEvents.Observer = { event in
            guard case .circuitStateChanged(_, _, let to) = event.kind else { return }
            let now = clock.now
            state.withLock { state in
                switch to {
                case .open where state.openedAt == nil:
                    state.openedAt = now
                    let milliseconds = Int64(event.attributes["open_ms"] ?? "") ?? 0
                    state.openUntil = now + .milliseconds(milliseconds)
                case .closed where state.closedAt == nil: state.closedAt = now
                default: break
                }
            }
        }
        let deadline = clock.now + .seconds(5)
        // Heals the origin 20 ms after the breaker opened.
        let healer = Task {
            while clock.now < deadline {
                if let openedAt = state.withLock({ $0.openedAt }) {
                    try? await Task.sleep(until: openedAt + .milliseconds(20), clock: clock)
                    origin.healthy.withLock { $0 = true }
                    state.withLock { $0.healedAt = clock.now }
                    return
                }
                try? await Task.sleep(for: .milliseconds(1))
            }
        }
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<16 {
                group.addTask {
                    while clock.now < deadline {
                        let done = state.withLock { $0.closedAt.map { clock.now - $0 > .milliseconds(300) } ?? false }
                        if done { return }
                        let start = clock.now
                        let closedBefore = state.withLock { $0.closedAt.map { $0 <= start } ?? false }
                        let ok: Bool
                        do {
                            let (_, response) = try await NetworkAgentEvents.observing(observer) {
                                try await provider.request(endpoint: endpoint)
                            }
                            ok = (response as? HTTPURLResponse)?.statusCode == 200
                        } catch {
                            ok = false
                        }
                        let end = clock.now
                        state.withLock { state in
                            // Only a call started after healing counts: one let through while the circuit was
                            // still closed may reach the healed origin late, which says nothing about recovery.
                            if ok, let healedAt = state.healedAt, start >= healedAt, state.firstSuccess == nil {
                                state.firstSuccess = (start, end)
                            }
                            if closedBefore, !ok { state.failuresAfterClose += 1 }
                        }
                        try? await Task.sleep(for: .milliseconds(5))
                    }
                }
            }
        }
        await healer.value
        let final = state.withLock { $0 }
        guard let healedAt = final.healedAt, let openedAt = final.openedAt, let openUntil = final.openUntil,
            let success = final.firstSuccess
        else {
            throw BenchFailure(
                "breaker_recovery: the breaker never opened, the origin never healed or no call succeeded"
            )
        }
        let value = healedAt.duration(to: success.end)
        // The goal: the open interval as drawn (jitter included) plus one probe round trip.
        let bound = openedAt.duration(to: openUntil) + success.start.duration(to: success.end)
        return (value.milliseconds, bound.milliseconds, final.failuresAfterClose)
    }

    /// `breaker_overhead`: CPU time per request a closed breaker adds. Value: with the breaker minus without, on a
    /// transport that answers at once, so that nothing but the breaker differs (on this shared 2-core machine the
    /// same A/B over CurlTransport varies by tens of µs between runs, far more than the 2 µs goal), measured in a
    /// fresh child process per repetition (`--measure-breaker`): in the bench's own process, after the scenarios
    /// before it, the same A/B read about twice as much as in a fresh one, because everything those scenarios left
    /// behind (threads, heap) slows both sides. Baseline: the provider's CPU per request on CurlTransport against the
    /// bench server without the breaker; the note gives that A/B's difference.
    static func overhead(_ context: BenchContext) async throws -> Measurement {
        let server = try await context.server()
        let transport = CurlTransport()
        let plain = NetworkAgentProvider<BenchEndpoint>(agent: NetworkAgent(transport: transport))
        let guarded = NetworkAgentProvider<BenchEndpoint>(
            plugins: [.circuitBreaker()],
            agent: NetworkAgent(transport: transport)
        )
        let endpoint = BenchEndpoint.get(server.baseURL, path: BenchRoutes.plainDocument)
        let requests = context.options.quick ? 4000 : 20000
        func cpuPerRequest(_ provider: NetworkAgentProvider<BenchEndpoint>) async throws -> Double {
            for _ in 0..<200 { _ = try await provider.request(endpoint: endpoint) }
            let before = ProcessCPU.seconds
            for _ in 0..<requests { _ = try await provider.request(endpoint: endpoint) }
            return (ProcessCPU.seconds - before) / Double(requests) * 1e6
        }
        var baselines: [Double] = []
        var differences: [Double] = []
        var isolated: [IsolatedCost] = []
        let isolatedRequests = context.options.quick ? 100_000 : 500_000
        for repetition in 0..<context.options.repetitions {
            let base: Double
            let subject: Double
            if repetition.isMultiple(of: 2) {
                base = try await cpuPerRequest(plain)
                subject = try await cpuPerRequest(guarded)
            } else {
                subject = try await cpuPerRequest(guarded)
                base = try await cpuPerRequest(plain)
            }
            baselines.append(base)
            differences.append(subject - base)
            let output = try await ChildProcess.run(context.executable, ["--measure-breaker", "\(isolatedRequests)"])
            guard output.status == 0, let cost = IsolatedCost(line: output.output) else {
                throw BenchFailure("the breaker_overhead child failed: \(output.errorSummary)")
            }
            isolated.append(cost)
        }
        await transport.shutdown()
        var measurement = Measurement(value: isolated.map(\.breaker).median, baseline: baselines.median)
        measurement.values = isolated.map(\.breaker)
        measurement.note =
            "value: CPU (user+sys) per request with - without the breaker on a transport that answers at once, "
            + "median of 100 interleaved pairs of blocks in a fresh child process per repetition (without it: "
            + String(format: "%.2f µs", isolated.map(\.plain).median ?? .nan)
            + " per call); baseline: CPU per request without it on CurlTransport, \(requests) sequential GETs of "
            + "the bench server per run; a plugin whose intercept only calls next costs "
            + String(format: "%.2f µs", isolated.map(\.passThrough).median ?? .nan)
            + " the same way; the same A/B on CurlTransport: median "
            + String(
                format: "%.1f µs, range %.1f to %.1f µs",
                differences.median ?? .nan,
                differences.min() ?? .nan,
                differences.max() ?? .nan
            )
        return measurement
    }

    /// What the `--measure-breaker` child reports, in µs of CPU per call: the breaker's cost, a pass-through
    /// plugin's, and a call without plugins. One line: `breaker passThrough plain`.
    struct IsolatedCost: Sendable {
        let breaker: Double
        let passThrough: Double
        let plain: Double

        init(breaker: Double, passThrough: Double, plain: Double) {
            self.breaker = breaker
            self.passThrough = passThrough
            self.plain = plain
        }

        init?(line: String) {
            guard let last = line.split(separator: "\n").last else { return nil }
            let fields = last.split(separator: " ").compactMap { Double($0) }
            guard fields.count == 3 else { return nil }
            self.init(breaker: fields[0], passThrough: fields[1], plain: fields[2])
        }

        var line: String { "\(breaker) \(passThrough) \(plain)" }
    }

    /// The hidden `--measure-breaker REQUESTS` mode: the breaker's and a pass-through plugin's cost per call, each
    /// over `requests` calls per side, printed as an ``IsolatedCost`` line.
    ///
    /// - Returns: The exit status.
    static func measureBreakerChild(requests: Int) async -> Int32 {
        do {
            let breaker = try await isolatedCost(requests: requests, plugin: CircuitBreakerPlugin())
            let passThrough = try await isolatedCost(requests: requests, plugin: PassThroughPlugin())
            let line = IsolatedCost(
                breaker: breaker.difference,
                passThrough: passThrough.difference,
                plain: breaker.plain
            )
            .line
            FileHandle.standardOutput.write(Data((line + "\n").utf8))
            return 0
        } catch {
            log("the breaker_overhead child failed: \(error)")
            return 1
        }
    }

    /// CPU per call a plugin adds on a transport that answers at once, and a call's CPU without it, in µs: the
    /// medians over interleaved pairs of blocks.
    ///
    /// `nonisolated`, so that the loop runs on the global executor and each call stays on its thread: called from
    /// the main actor, every call hopped to a pool thread and back, and on an idle machine those two wake-ups
    /// doubled a call's CPU (42 µs instead of 21) and moved the difference by µs between runs.
    nonisolated static func isolatedCost(
        requests: Int,
        plugin: any NetworkAgentPlugin
    ) async throws
        -> (difference: Double, plain: Double)
    {
        let transport = InstantTransport()
        let plain = NetworkAgentProvider<BenchEndpoint>(agent: NetworkAgent(transport: transport))
        let guarded = NetworkAgentProvider<BenchEndpoint>(plugins: [plugin], agent: NetworkAgent(transport: transport))
        guard let base = URL(string: "http://127.0.0.1:9") else { throw BenchFailure("bad URL") }
        let endpoint = BenchEndpoint.get(base, path: "/item")
        func cpu(_ provider: NetworkAgentProvider<BenchEndpoint>, _ count: Int) async throws -> Double {
            let before = ProcessCPU.seconds
            for _ in 0..<count { _ = try await provider.request(endpoint: endpoint) }
            return (ProcessCPU.seconds - before) / Double(count) * 1e6
        }
        // Many short blocks in turns, so that drift (other work on the machine) hits both sides of each pair alike;
        // the median of the pairs' differences leaves out the pairs a burst of other work hit (20 pairs of longer
        // blocks read 1.5-2.5 µs in runs where 100 pairs read 1.4-1.7).
        let pairs = 100
        let block = max(1, requests / pairs)
        _ = try await cpu(plain, block)
        _ = try await cpu(guarded, block)
        var differences: [Double] = []
        var plainCosts: [Double] = []
        for pair in 0..<pairs {
            let base: Double
            let subject: Double
            if pair.isMultiple(of: 2) {
                base = try await cpu(plain, block)
                subject = try await cpu(guarded, block)
            } else {
                subject = try await cpu(guarded, block)
                base = try await cpu(plain, block)
            }
            differences.append(subject - base)
            plainCosts.append(base)
        }
        return (differences.median ?? .nan, plainCosts.median ?? .nan)
    }
}

/// A plugin whose intercept only calls `next`: what any intercepting plugin costs, for comparison.
struct PassThroughPlugin: NetworkAgentPlugin {
    func intercept(
        _ request: URLRequest,
        endpoint: any NetworkAgentEndpoint,
        next: NetworkAgentExchange
    ) async throws -> (data: Data, response: URLResponse) {
        try await next(request)
    }
}

/// A transport that answers every request at once with an empty 200, for the breaker's own cost.
struct InstantTransport: HTTPTransport {
    func send(_ request: URLRequest) async throws -> (data: Data, response: URLResponse) {
        guard let url = request.url,
            let response = HTTPURLResponse(url: url, statusCode: 200, httpVersion: nil, headerFields: nil)
        else { throw NetworkAgentError(.invalidResponse, "no response") }
        return (Data(), response)
    }
}

extension Duration {
    /// The duration in milliseconds, as a `Double`.
    fileprivate var milliseconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) * 1000 + Double(attoseconds) / 1e15
    }
}
