import Foundation
import NetworkAgent
import NetworkAgentAuth
import NetworkAgentLogging
import NetworkAgentTokenRefresh

/// The one place where the Pokédex's provider and its plugin chain are built.
///
/// The chain, outermost first (Docs/Design.md explains the order):
/// 1. logging (`--verbose`) — sees each call, each attempt and the other plugins' events;
/// 2. token refresh (`--auth`) — adds the Bearer token and, on a 401, refreshes it once for every request that
///    was rejected at the same time, then re-sends the final request.
///
/// Status codes are left to the repository, which maps 404 to "not found".
public enum PokedexClient {
    /// The agent's settings: the app's own product token in the `User-Agent`.
    public static let configuration = NetworkAgentConfiguration(appToken: "pokedex/\(PokedexCLI.version)")

    /// Builds the provider with the plugins the options ask for.
    ///
    /// - Parameters:
    ///   - options: The command line.
    ///   - baseURL: The API's base URL (the token endpoint lives there too).
    ///   - transport: The transport (a fresh URLSession transport by default).
    /// - Returns: The provider.
    /// - Throws: When `--auth` is on and the first token cannot be had.
    public static func makeProvider(
        options: PokedexOptions,
        baseURL: URL,
        transport: any HTTPTransport = URLSessionTransport()
    ) async throws -> NetworkAgentProvider<PokeAPI> {
        let agent = NetworkAgent(transport: transport, configuration: configuration)
        var plugins: [any NetworkAgentPlugin] = []
        if options.verbose {
            plugins.append(.logging(.basic))
        }
        if options.auth {
            let refresher = TokenRefresher(
                token: try await fetchToken(agent: agent, baseURL: baseURL),
                refreshMargin: .milliseconds(50),
                maximumRefreshes: 20,
                refreshWindow: .seconds(10),
                onSessionExpired: { error in Terminal.error("pokedex: the session expired: \(error)") },
                refresh: { agent, _ in try await fetchToken(agent: agent, baseURL: baseURL) }
            )
            plugins.append(.tokenRefresh(refresher))
        }
        return NetworkAgentProvider(plugins: plugins, agent: agent)
    }

    /// The mirror's token response.
    private struct TokenResponse: Decodable {
        let accessToken: String
        let expiresIn: Double
    }

    /// Fetches a token from the API's `/token` endpoint through the agent's side-request path (no chain).
    static func fetchToken(agent: NetworkAgent, baseURL: URL) async throws -> AuthToken {
        let (data, response) = try await agent.request(PokeAPI(baseURL: baseURL, route: .token))
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        guard status == 200 else { throw PokedexError.unreachable("the token endpoint answered \(status)") }
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        let token = try decoder.decode(TokenResponse.self, from: data)
        return AuthToken(
            credential: .bearer(token.accessToken),
            expiresIn: .milliseconds(Int64(token.expiresIn * 1000))
        )
    }
}
