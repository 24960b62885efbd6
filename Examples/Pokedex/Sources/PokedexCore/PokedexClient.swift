import Foundation
import NetworkAgent

/// The one place where the Pokédex's provider and its plugin chain are built.
///
/// The chain, outermost first (see Docs/Design.md for why this order):
/// 1. validation of statuses is left to the repository, which maps 404 to "not found".
public enum PokedexClient {
    /// The agent's settings: the app's own product token in the `User-Agent`.
    public static let configuration = NetworkAgentConfiguration(appToken: "pokedex/\(PokedexCLI.version)")

    /// Builds the provider for a base URL with the plugins the options ask for.
    ///
    /// - Parameters:
    ///   - options: The command line.
    ///   - transport: The transport (a fresh URLSession transport by default).
    /// - Returns: The provider.
    public static func makeProvider(
        options: PokedexOptions,
        transport: any HTTPTransport = URLSessionTransport()
    ) -> NetworkAgentProvider<PokeAPI> {
        let plugins: [any NetworkAgentPlugin] = []
        return NetworkAgentProvider(
            plugins: plugins,
            agent: NetworkAgent(transport: transport, configuration: configuration)
        )
    }
}
