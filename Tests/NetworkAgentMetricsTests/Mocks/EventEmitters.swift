import Foundation
import NetworkAgent
import NetworkAgentMetrics
import NetworkAgentTesting

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Endpoints for the event tests; each path triggers one of the fake plugins below.
enum EventApi: NetworkAgentEndpoint {
    /// `/flaky`: the server answers 503 a few times, then 200.
    case flaky(base: URL)
    /// `/cached`: the fake cache answers from memory after the first fetch.
    case cached(base: URL)
    /// `/stale`: the fake cache reports a stale entry, then a revalidation.
    case stale(base: URL)
    /// `/secured`: the server answers 401 unless the token is fresh.
    case secured(base: URL)

    var baseURL: URL {
        switch self {
        case .flaky(let base), .cached(let base), .stale(let base), .secured(let base): base
        }
    }

    var path: String {
        switch self {
        case .flaky: "/flaky"
        case .cached: "/cached"
        case .stale: "/stale"
        case .secured: "/secured"
        }
    }

    var method: HTTPMethod { .get }
    var task: HTTPTask { .requestPlain }
}

/// A cache in memory for `/cached` (and a pretend revalidation for `/stale`), emitting `cache.hit`, `cache.miss`,
/// `cache.stored`, `cache.stale` and `cache.revalidated`.
final class FakeCache: NetworkAgentPlugin {
    private let stored = Locked<[String: Data]>([:])

    func intercept(
        _ request: URLRequest,
        endpoint: any NetworkAgentEndpoint,
        next: NetworkAgentExchange
    ) async throws -> (data: Data, response: URLResponse) {
        guard let url = request.url, url.path == "/cached" || url.path == "/stale" else {
            return try await next(request)
        }
        if url.path == "/stale" {
            NetworkAgentEvents.emit(NetworkAgentEvent(.cacheStale))
            let result = try await next(request)
            NetworkAgentEvents.emit(NetworkAgentEvent(.cacheRevalidated))
            return result
        }
        if let data = stored.withLock({ $0[url.path] }),
            let response = HTTPURLResponse(url: url, statusCode: 200, httpVersion: "HTTP/1.1", headerFields: nil)
        {
            NetworkAgentEvents.emit(NetworkAgentEvent(.cacheHit))
            return (data: data, response: response)
        }
        NetworkAgentEvents.emit(NetworkAgentEvent(.cacheMiss))
        let result = try await next(request)
        stored.withLock { $0[url.path] = result.data }
        NetworkAgentEvents.emit(NetworkAgentEvent(source: "cache", name: "stored"))
        return result
    }
}

/// On a 401, "refreshes" the token in a task of its own (as a single-flight refresher would; it inherits the event
/// observers) and sends again, emitting `token_refresh.refresh_started` and `token_refresh.refresh_succeeded`.
struct FakeTokenRefresh: NetworkAgentPlugin {
    func intercept(
        _ request: URLRequest,
        endpoint: any NetworkAgentEndpoint,
        next: NetworkAgentExchange
    ) async throws -> (data: Data, response: URLResponse) {
        let result = try await next(request)
        guard (result.response as? HTTPURLResponse)?.statusCode == 401 else { return result }
        NetworkAgentEvents.emit(NetworkAgentEvent(source: "token_refresh", name: "refresh_started"))
        let token = await Task {
            NetworkAgentEvents.emit(NetworkAgentEvent(.tokenRefresh(succeeded: true)))
            return "fresh"
        }.value
        var retried = request
        retried.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
        return try await next(retried)
    }
}

/// A handler that keeps every observation, in order.
final class RecordingHandler: MetricsHandler {
    let observations = Locked<[MetricsObservation]>([])

    func handle(_ observation: MetricsObservation) {
        observations.withLock { $0.append(observation) }
    }

    var all: [MetricsObservation] { observations.withLock { $0 } }
}

/// Moves a manual clock forward during the exchange, so that the outer metrics plugin measures exactly `duration`.
struct ClockAdvancer: NetworkAgentPlugin {
    let clock: ManualClock
    let duration: @Sendable (URLRequest) -> Duration

    func intercept(
        _ request: URLRequest,
        endpoint: any NetworkAgentEndpoint,
        next: NetworkAgentExchange
    ) async throws -> (data: Data, response: URLResponse) {
        let result = try await next(request)
        clock.advance(by: duration(request))
        return result
    }
}
