import Foundation
import NetworkAgent
import NetworkAgentAuth
import NetworkAgentMetrics

/// The PokeAPI v2 endpoints the Pokédex uses, against a base URL such as `https://pokeapi.co/api/v2` or the
/// offline mirror's `http://127.0.0.1:<port>/api/v2`.
public struct PokeAPI: NetworkAgentEndpoint, AuthorizableEndpoint, MetricsRouteNaming {
    /// One PokeAPI call.
    public enum Route: Sendable, Hashable {
        /// A page of the pokemon list.
        case pokemonList(limit: Int, offset: Int)
        /// One pokemon by name or id.
        case pokemon(String)
        /// One species by name or id.
        case species(String)
        /// One type by name or id.
        case type(String)
        /// Every name, for search (the live API's list with a limit past its count).
        case allNames
        /// The mirror's token endpoint (auth mode only).
        case token
    }

    /// Where the API lives, e.g. `https://pokeapi.co/api/v2`.
    public let baseURL: URL
    /// Which call.
    public let route: Route

    /// Creates an endpoint.
    public init(baseURL: URL, route: Route) {
        self.baseURL = baseURL
        self.route = route
    }

    /// The path, with PokeAPI's trailing slash.
    public var path: String {
        switch route {
        case .pokemonList, .allNames: "/pokemon/"
        case .pokemon(let name): "/pokemon/\(name.lowercased())/"
        case .species(let name): "/pokemon-species/\(name.lowercased())/"
        case .type(let name): "/type/\(name.lowercased())/"
        case .token: "/token"
        }
    }

    /// `POST` for the token, `GET` otherwise.
    public var method: HTTPMethod { route == .token ? .post : .get }

    /// JSON in and out.
    public var headers: [String: String] { ["Accept": "application/json"] }

    /// The list's paging as a query.
    public var task: HTTPTask {
        switch route {
        case .pokemonList(let limit, let offset):
            .requestAttributes(attributes: ["limit": limit, "offset": offset], encoding: .url)
        case .allNames:
            .requestAttributes(attributes: ["limit": 100_000, "offset": 0], encoding: .url)
        case .token:
            .requestWithoutAttributes(content: ["client": "pokedex"])
        default:
            .requestPlain
        }
    }

    /// The token endpoint is the one call that carries no token.
    public var authorization: AuthorizationRequirement { route == .token ? .none : .default }

    /// Ten seconds for any call.
    public var timeout: Duration? { .seconds(10) }

    /// A low-cardinality name for metrics: the route's template, never the raw URL.
    public var metricsRoute: String {
        switch route {
        case .pokemonList, .allNames: "/pokemon"
        case .pokemon: "/pokemon/{name}"
        case .species: "/pokemon-species/{name}"
        case .type: "/type/{name}"
        case .token: "/token"
        }
    }
}
