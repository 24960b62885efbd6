import Foundation
import NetworkAgent
import NetworkAgentTesting
import Testing

@testable import NetworkAgentMetrics

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A plugin whose only handler is a registry hands it each observation by a direct call; one with more handlers
/// goes through `handle(_:)`. Both must leave the registry with the same metrics.
@Suite struct SoleRegistryTests {
    /// A handler that does nothing: with it, the plugin takes the path of several handlers.
    struct Ignoring: MetricsHandler {
        func handle(_ observation: MetricsObservation) {}
    }

    enum Api: NetworkAgentEndpoint {
        case ok, created, missing, broken, failing, posted, events, headless

        var baseURL: URL { URL(fileURLWithPath: "/") }
        var path: String { "/\(self)" }
        var method: HTTPMethod { self == .posted ? .post : .get }
        var task: HTTPTask {
            self == .posted ? .requestAttributes(attributes: ["a": "b"], encoding: .json) : .requestPlain
        }
    }

    /// Answers by path, reporting a time to headers (as a libcurl transport does) and timings on most answers;
    /// `/failing` throws, `/events` emits plugin events, `/headless` has no timings and no time to headers.
    struct Transport: HTTPTransport {
        func send(_ request: URLRequest) async throws -> (data: Data, response: URLResponse) {
            guard let url = request.url else { throw URLError(.badURL) }
            let path = url.path
            if path != "/headless" {
                HTTPTransportContext.reportResponseHeaders(after: .microseconds(path.utf8.count * 137))
            }
            if path == "/failing" {
                throw NetworkAgentError(.transport, "down", underlying: URLError(.networkConnectionLost))
            }
            if path == "/events" {
                NetworkAgentEvents.emit(NetworkAgentEvent(.retryScheduled(delay: .milliseconds(5))))
                NetworkAgentEvents.emit(NetworkAgentEvent(.cacheMiss))
                NetworkAgentEvents.emit(NetworkAgentEvent(.tokenRefresh(succeeded: true)))
                NetworkAgentEvents.emit(NetworkAgentEvent(source: "test", name: "custom", attributes: [:]))
            }
            let status: Int =
                switch path {
                case "/created": 201
                case "/missing": 404
                case "/broken": 503
                default: 200
                }
            let timings: HTTPTransferTimings? =
                path == "/headless"
                ? nil
                : HTTPTransferTimings(
                    nameLookup: .microseconds(40),
                    connect: .microseconds(90),
                    preTransfer: .microseconds(95),
                    firstByte: .microseconds(400 + path.utf8.count),
                    total: .microseconds(700)
                )
            guard
                let response = HTTPURLResponse.withTransferTimings(
                    timings,
                    url: url,
                    statusCode: status,
                    httpVersion: "HTTP/1.1",
                    headerFields: ["Content-Type": "application/json"]
                )
            else { throw URLError(.badServerResponse) }
            return (Data(repeating: 0x61, count: path.utf8.count * 10), response)
        }
    }

    /// Sends the same calls, in the same order, through a provider with `plugin`.
    func run(_ plugin: MetricsPlugin) async {
        let provider = NetworkAgentProvider<Api>(plugins: [plugin], agent: NetworkAgent(transport: Transport()))
        let calls: [Api] = [.ok, .created, .missing, .broken, .failing, .posted, .events, .headless, .ok, .failing]
        for (index, call) in calls.enumerated() {
            for _ in 0...(index % 3) {
                _ = try? await provider.request(endpoint: call)
            }
        }
    }

    @Test(arguments: [1, 3, 1_000])
    func theDirectCallsRecordWhatHandleRecords(seriesLimit: Int) async {
        let configuration = MetricsConfiguration(quantileWindow: 4, maximumSeriesPerMetric: seriesLimit)
        let clock = ManualClock()
        let direct = MetricsRegistry(configuration: configuration)
        let handled = MetricsRegistry(configuration: configuration)
        await run(MetricsPlugin(handlers: [direct], clock: clock))
        await run(MetricsPlugin(handlers: [handled, Ignoring()], clock: clock))
        #expect(direct.snapshot() == handled.snapshot())
        #expect(direct.prometheusText() == handled.prometheusText())
        #expect(direct.inFlight == 0 && handled.inFlight == 0)
        #expect(direct.snapshot().total("networkagent_requests_total") == 19)
    }

    @Test func attemptsToo() async {
        let clock = ManualClock()
        let direct = MetricsRegistry()
        let handled = MetricsRegistry()
        await run(MetricsPlugin(handlers: [direct], level: .attempts, clock: clock))
        await run(MetricsPlugin(handlers: [handled, Ignoring()], level: .attempts, clock: clock))
        #expect(direct.prometheusText() == handled.prometheusText())
        #expect(direct.snapshot().total("networkagent_attempts_total") == 19)
    }

    /// The method label without `uppercased()` per request is `HTTPMethod.name`.
    @Test func methodLabelsAreTheMethodsNames() {
        for method in HTTPMethod.allCases {
            #expect(MetricsLabels.name(of: method) == method.name)
        }
    }

    /// The outcome key hashes the route key's hash instead of the route and method: keys of the same labels are
    /// equal and hash alike whichever way they were made; keys of other labels are not equal.
    @Test func outcomeKeysFileAsTheirLabels() {
        let routes = ["/a", "/A", "caf\u{E9}", "cafe\u{301}", "", "overflow"]
        let methods = ["GET", "POST"]
        let classes = ["2xx", "5xx", "none"]
        let outcomes = ["success", "http_error"]
        var keys: [OutcomeKey: [String]] = [:]
        for route in routes {
            for method in methods {
                for statusClass in classes {
                    for outcome in outcomes {
                        let key = OutcomeKey(route: route, method: method, statusClass: statusClass, outcome: outcome)
                        let other = OutcomeKey(
                            route: RouteKey(route: String(decoding: Array(route.utf8), as: UTF8.self), method: method),
                            statusClass: statusClass,
                            outcome: outcome
                        )
                        #expect(key == other)
                        #expect(key.hashValue == other.hashValue)
                        keys[key, default: []].append(route)
                    }
                }
            }
        }
        // "café" in its two spellings is one label (as `String` compares), every other combination its own key.
        #expect(keys.count == (routes.count - 1) * methods.count * classes.count * outcomes.count)
        #expect(OutcomeKey.overflow.labelValues == ["overflow", "overflow", "overflow", "overflow"])
    }
}
