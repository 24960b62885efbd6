import Foundation
import NetworkAgent
import NetworkAgentMetrics
import NetworkAgentTestSupport
import Testing

/// Route labels derived from endpoints, without a network.
@Suite struct MetricsRouteTests {
    static let base = URL(fileURLWithPath: "/")

    enum Described: NetworkAgentEndpoint, CustomStringConvertible {
        case home
        case search(query: String)
        var baseURL: URL { MetricsRouteTests.base }
        var path: String { "/" }
        var method: HTTPMethod { .get }
        var task: HTTPTask { .requestPlain }
        var description: String { "custom" }
    }

    struct Named: NetworkAgentEndpoint, MetricsRouteNaming {
        var metricsRoute: String
        var base = MetricsRouteTests.base
        var baseURL: URL { base }
        var path: String { "/" }
        var method: HTTPMethod { .delete }
        var task: HTTPTask { .requestPlain }
    }

    @Test func enumCaseNameWithoutAssociatedValues() {
        #expect(MetricsLabels.route(for: LoadApi.fast(base: Self.base, id: 42)) == "fast")
        #expect(MetricsLabels.route(for: LoadApi.status(base: Self.base, code: 500)) == "status")
        #expect(
            MetricsLabels(endpoint: LoadApi.echo(base: Self.base, body: Data())) == .init(route: "echo", method: "POST")
        )
    }

    @Test func enumCaseWithPayloadIgnoresACustomDescription() {
        #expect(MetricsLabels.route(for: Described.search(query: "pikachu")) == "search")
        // A case without payload has only its description to go by: still one fixed text per case.
        #expect(MetricsLabels.route(for: Described.home) == "custom")
    }

    @Test func routeNamingWins() {
        #expect(MetricsLabels.route(for: PokeApi.pokemon(base: Self.base, id: 25)) == "/pokemon/{id}")
        #expect(MetricsLabels(endpoint: Named(metricsRoute: "items")) == .init(route: "items", method: "DELETE"))
    }

    @Test func structEndpointIsItsTypeName() {
        #expect(MetricsLabels.route(for: PlainEndpoint(baseURL: Self.base, path: "/users/7")) == "PlainEndpoint")
    }

    @Test func routesAreTrimmedCutAndNeverEmpty() {
        #expect(MetricsLabels(endpoint: Named(metricsRoute: "  ")).route == MetricsLabels.unknownRoute)
        #expect(MetricsLabels(endpoint: Named(metricsRoute: " users\n")).route == "users")
        let long = String(repeating: "x", count: 500)
        #expect(MetricsLabels(endpoint: Named(metricsRoute: long)).route.count == MetricsLabels.maximumRouteLength)
    }
}
