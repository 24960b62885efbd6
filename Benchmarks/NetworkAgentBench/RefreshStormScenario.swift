import Foundation
import NetworkAgent
import NetworkAgentAuth
import NetworkAgentCurl
import NetworkAgentTokenRefresh

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `refresh_storm`: 1,000 requests started at once on ``BenchRoutes/protectedDocument`` with a stale token, so the
/// server answers them 401; the token refresh plugin must refresh once and retry each of them with the new token.
///
/// The refresh is local (it returns ``BenchRoutes/validToken`` without a request), so the figure is the plugin's
/// and the transport's, not an OAuth server's. Each repetition has a new ``TokenRefresher`` holding the stale
/// token; the providers of all repetitions share one `CurlTransport`, warmed up first, so connections are open.
///
/// The baseline is the same 2,000 exchanges without the refresh machinery: 1,000 tasks started at once, each sending
/// a GET with the stale token (answered 401) and then one with the valid token, through a provider without plugins
/// on the same transport and behind the same gate. So the ratio is what the refresh costs, not what HTTP costs.
@MainActor
enum RefreshStormScenario {
    /// The requests of one storm.
    nonisolated static let stormSize = 1_000
    /// The name of the count the goal checks.
    static let refreshCount = "refresh calls"

    static func run(_ context: BenchContext) async throws -> Measurement {
        let server = try await context.server()
        let endpoint = BenchEndpoint.get(server.baseURL, path: BenchRoutes.protectedDocument)
        let agent = NetworkAgent(transport: CurlTransport())
        let valid = refreshingProvider(agent, token: BenchRoutes.validToken, refreshCalls: Locked(0))
        _ = try await LoadGenerator.requestsPerSecond(
            total: ThroughputComparison.warmUpRequests,
            concurrency: ThroughputComparison.concurrency,
            CoreOverheadScenario.providerGET(endpoint, valid)
        )

        var refreshCounts: [Int] = []
        var retriedCounts: [Int] = []
        var baselineCPU: [Double] = []
        var stormCPU: [Double] = []
        /// The bench's CPU time per exchange of a storm, in microseconds.
        func perExchange(since start: Double) -> Double {
            (ProcessCPU.seconds - start) / Double(2 * stormSize) * 1_000_000
        }
        var measurement = try await Repetitions.interleaved(
            context.options.repetitions,
            baseline: {
                let start = ProcessCPU.seconds
                let milliseconds = try await plainStorm(server.baseURL, agent.transport)
                baselineCPU.append(perExchange(since: start))
                return milliseconds
            },
            subject: {
                let start = ProcessCPU.seconds
                let storm = try await storm(endpoint, agent.transport)
                stormCPU.append(perExchange(since: start))
                refreshCounts.append(storm.refreshCalls)
                retriedCounts.append(storm.retried)
                return storm.milliseconds
            }
        )
        measurement.counts[refreshCount] = refreshCounts
        let retried = "\(retriedCounts.min() ?? 0)-\(retriedCounts.max() ?? 0)"
        measurement.note =
            "\(stormSize) GETs at once with a stale token, all held until in flight; refresh calls per storm: "
            + refreshCounts.map(String.init).joined(separator: ", ")
            + "; requests answered 401 and retried per storm: \(retried); the refresh is local (no HTTP); "
            + "baseline: the same \(2 * stormSize) exchanges as plain GETs (\(stormSize) tasks at once, held until "
            + "in flight, each a GET with the stale token answered 401, then one with the valid token) through a "
            + "provider without plugins; both on CurlTransport; "
            + String(
                format: "client CPU per exchange (this process, all threads): storm %.1f us, baseline %.1f us",
                stormCPU.median ?? 0,
                baselineCPU.median ?? 0
            )
        return measurement
    }

    /// What one storm did.
    private struct Storm: Sendable {
        let milliseconds: Double
        let refreshCalls: Int
        let retried: Int
    }

    /// Starts ``stormSize`` requests at once with a stale token and waits for all of them to succeed.
    ///
    /// A ``StormGate`` holds the first sends until all of them have reached the transport, so every request is
    /// in flight with the stale token before the first 401 comes back. Without it the first answers arrive while
    /// tasks are still starting, and the requests that start after the refresh never see a 401 (only 235-395 of
    /// 1,000 did in trial runs at a load average of 8).
    nonisolated private static func storm(
        _ endpoint: BenchEndpoint,
        _ transport: any HTTPTransport
    ) async throws -> Storm {
        let refreshCalls = Locked(0)
        let retried = Locked(0)
        let gate = StormGate(holding: stormSize, forwardingTo: transport)
        let provider = refreshingProvider(
            NetworkAgent(transport: gate),
            token: "stale-token",
            refreshCalls: refreshCalls
        )
        // If a request failed before reaching the transport, the gate would never fill: open it after a minute so
        // the scenario fails (on the retried count) instead of hanging.
        let watchdog = Task {
            try await Task.sleep(for: .seconds(60))
            gate.open()
        }
        defer { watchdog.cancel() }
        let clock = ContinuousClock()
        let start = clock.now
        try await NetworkAgentEvents.observing({ event in
            if event.source == "token_refresh", event.name == "request_retried" {
                retried.withLock { $0 += 1 }
            }
        }) {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<stormSize {
                    group.addTask {
                        let (data, response) = try await provider.request(endpoint: endpoint)
                        try BenchRoutes.checkDocument(data, response)
                    }
                }
                try await group.waitForAll()
            }
        }
        let elapsed = start.duration(to: clock.now).seconds * 1_000
        return Storm(
            milliseconds: elapsed,
            refreshCalls: refreshCalls.withLock { $0 },
            retried: retried.withLock { $0 }
        )
    }

    /// The storm's exchanges without the plugin: ``stormSize`` tasks at once, each a GET with the stale token
    /// (checked: 401) and then a GET with the valid token (checked: the document), behind a ``StormGate`` that holds
    /// the first sends until all have arrived, as in the storm. Returns the wall time in milliseconds.
    nonisolated private static func plainStorm(_ baseURL: URL, _ transport: any HTTPTransport) async throws -> Double {
        let gate = StormGate(holding: stormSize, forwardingTo: transport)
        let provider = NetworkAgentProvider<BenchEndpoint>(agent: NetworkAgent(transport: gate))
        let watchdog = Task {
            try await Task.sleep(for: .seconds(60))
            gate.open()
        }
        defer { watchdog.cancel() }
        let stale = authorized(baseURL, token: "stale-token")
        let valid = authorized(baseURL, token: BenchRoutes.validToken)
        let clock = ContinuousClock()
        let start = clock.now
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<stormSize {
                group.addTask {
                    let (_, rejected) = try await provider.request(endpoint: stale)
                    let status = (rejected as? HTTPURLResponse)?.statusCode ?? 0
                    guard status == 401 else { throw BenchFailure("the stale token got status \(status), not 401") }
                    let (data, response) = try await provider.request(endpoint: valid)
                    try BenchRoutes.checkDocument(data, response)
                }
            }
            try await group.waitForAll()
        }
        return start.duration(to: clock.now).seconds * 1_000
    }

    /// A GET of the protected document with `Authorization: Bearer <token>`.
    nonisolated private static func authorized(_ baseURL: URL, token: String) -> BenchEndpoint {
        let plain = BenchEndpoint.get(baseURL, path: BenchRoutes.protectedDocument)
        return BenchEndpoint(
            baseURL: plain.baseURL,
            path: plain.path,
            method: plain.method,
            headers: plain.headers.merging(["Authorization": "Bearer \(token)"]) { _, new in new },
            task: plain.task,
            timeout: plain.timeout
        )
    }

    /// A provider whose token refresher starts with `token` and whose refresh returns the valid token, counting
    /// its calls.
    nonisolated private static func refreshingProvider(
        _ agent: NetworkAgent,
        token: String,
        refreshCalls: Locked<Int>
    ) -> NetworkAgentProvider<BenchEndpoint> {
        let refresher = TokenRefresher(token: AuthToken(credential: .bearer(token))) { _, _ in
            refreshCalls.withLock { $0 += 1 }
            return AuthToken(credential: .bearer(BenchRoutes.validToken))
        }
        return NetworkAgentProvider(plugins: [.tokenRefresh(refresher), .validate()], agent: agent)
    }
}

/// A transport that holds the first `count` sends until all of them have arrived, then lets them and every later
/// send through: `refresh_storm`'s way of having all its requests in flight with the stale token at once.
final class StormGate: HTTPTransport {
    private struct State {
        var isOpen = false
        var waiting: [CheckedContinuation<Void, Never>] = []
    }

    private let count: Int
    private let inner: any HTTPTransport
    private let state = Locked(State())

    init(holding count: Int, forwardingTo inner: any HTTPTransport) {
        self.count = count
        self.inner = inner
    }

    func send(_ request: URLRequest) async throws -> (data: Data, response: URLResponse) {
        if !state.withLock({ $0.isOpen }) {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let released = state.withLock { state -> [CheckedContinuation<Void, Never>] in
                    if state.isOpen { return [continuation] }
                    state.waiting.append(continuation)
                    guard state.waiting.count >= count else { return [] }
                    state.isOpen = true
                    defer { state.waiting = [] }
                    return state.waiting
                }
                released.forEach { $0.resume() }
            }
        }
        return try await inner.send(request)
    }

    /// Lets every held send through, and every later one.
    func open() {
        let released = state.withLock { state in
            state.isOpen = true
            defer { state.waiting = [] }
            return state.waiting
        }
        released.forEach { $0.resume() }
    }
}
