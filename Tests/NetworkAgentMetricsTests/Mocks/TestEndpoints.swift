import Foundation
import NetworkAgent
import NetworkAgentMetrics
import NetworkAgentTestServer

/// The endpoints of the loopback tests: case names are the routes, the server's base URL rides along.
enum LoadApi: NetworkAgentEndpoint {
    case fast(base: URL, id: Int)
    case slow(base: URL, id: Int)
    case status(base: URL, code: Int)
    case stall(base: URL, timeout: Duration)
    case echo(base: URL, body: Data)

    var baseURL: URL {
        switch self {
        case .fast(let base, _), .slow(let base, _), .status(let base, _), .stall(let base, _), .echo(let base, _):
            base
        }
    }

    var path: String {
        switch self {
        case .fast(_, let id): "/fast/\(id)"
        case .slow(_, let id): "/slow/\(id)"
        case .status(_, let code): "/status/\(code)"
        case .stall: "/stall"
        case .echo: "/echo"
        }
    }

    var method: HTTPMethod {
        if case .echo = self { return .post }
        return .get
    }

    var task: HTTPTask {
        if case .echo(_, let body) = self { return .requestWithoutAttributes(content: body) }
        return .requestPlain
    }

    var timeout: Duration? {
        if case .stall(_, let timeout) = self { return timeout }
        return .seconds(20)
    }
}

/// An endpoint with a route template of its own.
enum PokeApi: NetworkAgentEndpoint, MetricsRouteNaming {
    case pokemon(base: URL, id: Int)
    case list(base: URL)

    var baseURL: URL {
        switch self {
        case .pokemon(let base, _), .list(let base): base
        }
    }

    var path: String {
        switch self {
        case .pokemon(_, let id): "/pokemon/\(id)"
        case .list: "/pokemon"
        }
    }

    var method: HTTPMethod { .get }
    var task: HTTPTask { .requestPlain }

    var metricsRoute: String {
        switch self {
        case .pokemon: "/pokemon/{id}"
        case .list: "/pokemon"
        }
    }
}
