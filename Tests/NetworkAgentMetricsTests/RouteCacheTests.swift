import Foundation
import NetworkAgent
import NetworkAgentTestSupport
import Testing

@testable import NetworkAgentMetrics

/// `MetricsLabels.route(for:)` remembers per endpoint type how its routes are found; every endpoint must still get
/// the route that working it out from scratch (the `MetricsRouteNaming` cast, then the mirror) gives.
@Suite struct RouteCacheTests {
    static let base = URL(fileURLWithPath: "/")

    /// Adopts the naming with a route per case, so a route remembered for the type would be wrong for the next case.
    enum PerCase: NetworkAgentEndpoint, MetricsRouteNaming {
        case first, second(Int)
        var metricsRoute: String {
            switch self {
            case .first: "/first"
            case .second: "/second/{n}"
            }
        }
        var baseURL: URL { RouteCacheTests.base }
        var path: String { "/" }
        var method: HTTPMethod { .get }
        var task: HTTPTask { .requestPlain }
    }

    enum Cases: NetworkAgentEndpoint {
        case plain, withValue(id: Int), other(String)
        var baseURL: URL { RouteCacheTests.base }
        var path: String { "/" }
        var method: HTTPMethod { .post }
        var task: HTTPTask { .requestPlain }
    }

    /// Each specialisation is a type of its own, with a name of its own.
    struct Generic<Tag>: NetworkAgentEndpoint {
        var baseURL: URL { RouteCacheTests.base }
        var path: String { "/" }
        var method: HTTPMethod { .get }
        var task: HTTPTask { .requestPlain }
    }

    final class ClassEndpoint: NetworkAgentEndpoint, Sendable {
        var baseURL: URL { RouteCacheTests.base }
        var path: String { "/" }
        var method: HTTPMethod { .get }
        var task: HTTPTask { .requestPlain }
    }

    struct NamedStruct: NetworkAgentEndpoint, MetricsRouteNaming {
        var metricsRoute: String
        var baseURL: URL { RouteCacheTests.base }
        var path: String { "/" }
        var method: HTTPMethod { .get }
        var task: HTTPTask { .requestPlain }
    }

    @Test func rememberedRoutesEqualRoutesWorkedOutAgain() {
        let endpoints: [any NetworkAgentEndpoint] = [
            PerCase.first, PerCase.second(2), PerCase.first,
            Cases.plain, Cases.withValue(id: 7), Cases.other("x"), Cases.plain,
            Generic<Int>(), Generic<String>(), Generic<Int>(),
            ClassEndpoint(), ClassEndpoint(),
            NamedStruct(metricsRoute: "a"), NamedStruct(metricsRoute: "b"),
            PlainEndpoint(baseURL: Self.base, path: "/users/7"), PlainEndpoint(baseURL: Self.base, path: "/x"),
        ]
        // Twice round: the first meeting of a type fills the cache, every later one reads it.
        for endpoint in endpoints + endpoints {
            #expect(MetricsLabels.route(for: endpoint) == MetricsLabels.uncachedRoute(for: endpoint).1, "\(endpoint)")
        }
        #expect(MetricsLabels.route(for: PerCase.second(1)) == "/second/{n}")
        #expect(MetricsLabels.route(for: Cases.withValue(id: 1)) == "withValue")
        #expect(MetricsLabels.route(for: Generic<Int>()) != MetricsLabels.route(for: Generic<String>()))
        #expect(MetricsLabels.uncachedRoute(for: Cases.plain).0 == .enumCase)
        #expect(MetricsLabels.uncachedRoute(for: PerCase.first).0 == .named)
        #expect(MetricsLabels.uncachedRoute(for: ClassEndpoint()).0 == .fixed("ClassEndpoint"))
    }
}
