import Foundation
import NetworkAgent

/// What can go wrong for a Pokédex user, each with one clear line to print.
public enum PokedexError: Error, Equatable, CustomStringConvertible {
    /// No pokemon, species or type of that name.
    case notFound(kind: String, name: String)
    /// The server could not be reached or answered badly.
    case unreachable(String)
    /// The circuit breaker failed the call fast: the server failed most recent calls. `retryAfter` is how long the
    /// circuit stays open (`nil` while its probes are in flight).
    case circuitOpen(String, retryAfter: Duration?)
    /// `--offline` and the answer is not cached.
    case notCached(String)
    /// A pokemon the built-in offline mirror does not hold: it has Generation I only.
    case notInMirror(String)
    /// The server's answer did not decode.
    case unexpectedPayload(String)
    /// The command line is wrong.
    case usage(String)

    /// The live PokeAPI, for `--base-url`.
    public static let liveAPI = "https://pokeapi.co/api/v2"

    /// One line for standard error.
    public var description: String {
        switch self {
        case .notFound(let kind, let name): "no \(kind) named \"\(name)\""
        case .unreachable(let detail): "cannot reach the Pokédex server: \(detail)"
        case .circuitOpen(let detail, _): "the Pokédex server is failing, not asked again yet: \(detail)"
        case .notCached(let what): "\(what) is not in the cache (run `pokedex sync` while online)"
        case .notInMirror(let name):
            "pokemon \"\(name)\" is not here: the offline mirror holds only the first 151 pokemon (Generation I); "
                + "for the live API add --base-url \(PokedexError.liveAPI)"
        case .unexpectedPayload(let detail): "the server's answer did not decode: \(detail)"
        case .usage(let detail): detail
        }
    }
}
