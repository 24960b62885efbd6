import Foundation
import NetworkAgent
import NetworkAgentCircuitBreaker

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Fetches and decodes PokeAPI resources, as the seed README's repositories do: the provider returns raw data,
/// the repository decodes and turns failures into ``PokedexError``.
public struct PokedexRepository: Sendable {
    private let provider: NetworkAgentProvider<PokeAPI>
    private let baseURL: URL
    private let offline: Bool

    /// Creates a repository.
    ///
    /// - Parameters:
    ///   - provider: The provider with the plugin chain (see ``PokedexClient``).
    ///   - baseURL: The API's base URL.
    ///   - offline: Whether answers come from the cache only (a 504 then means "not cached").
    public init(provider: NetworkAgentProvider<PokeAPI>, baseURL: URL, offline: Bool = false) {
        self.provider = provider
        self.baseURL = baseURL
        self.offline = offline
    }

    private static let decoder: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        return decoder
    }()

    /// A page of the pokemon list.
    public func list(limit: Int, offset: Int) async throws -> ResourceList {
        try await fetch(.pokemonList(limit: limit, offset: offset), kind: "page", name: "\(offset)")
    }

    /// Every pokemon name (the full index), for search.
    public func allNames() async throws -> [NamedResource] {
        let list: ResourceList = try await fetch(.allNames, kind: "list", name: "all")
        return list.results
    }

    /// One pokemon by name or id.
    public func pokemon(_ name: String) async throws -> Pokemon {
        try await fetch(.pokemon(name), kind: "pokemon", name: name)
    }

    /// One species by name or id.
    public func species(_ name: String) async throws -> PokemonSpecies {
        try await fetch(.species(name), kind: "species", name: name)
    }

    /// One type by name or id.
    public func type(_ name: String) async throws -> PokemonType {
        try await fetch(.type(name), kind: "type", name: name)
    }

    private func fetch<T: Decodable>(_ route: PokeAPI.Route, kind: String, name: String) async throws -> T {
        let data: Data
        let response: URLResponse
        do {
            (data, response) = try await provider.request(endpoint: PokeAPI(baseURL: baseURL, route: route))
        } catch let error as NetworkAgentError {
            // The chain has no validation plugin, so statuses arrive as responses: an error here is the network's,
            // or the circuit breaker's, which says when to try again.
            if error.code == .circuitOpen {
                throw PokedexError.circuitOpen(error.message, retryAfter: error.circuitBreakerError?.retryAfter)
            }
            throw PokedexError.unreachable(error.message)
        }
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        switch status {
        case 200..<300:
            do {
                return try Self.decoder.decode(T.self, from: data)
            } catch {
                throw PokedexError.unexpectedPayload("\(kind) \(name): \(error)")
            }
        case 404:
            throw PokedexError.notFound(kind: kind, name: name)
        case 504 where offline:
            throw PokedexError.notCached("\(kind) \(name)")
        default:
            throw PokedexError.unreachable("\(kind) \(name): the server answered \(status)")
        }
    }
}
