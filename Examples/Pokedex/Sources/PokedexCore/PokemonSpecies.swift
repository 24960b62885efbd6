import Foundation

/// A species, as `/pokemon-species/{id or name}/` describes it (the fields the example uses).
public struct PokemonSpecies: Codable, Sendable {
    /// A genus in one language, e.g. "Mouse Pokémon".
    public struct Genus: Codable, Sendable {
        /// The genus.
        public let genus: String
        /// Its language.
        public let language: NamedResource
    }

    /// A Pokédex entry in one language and game version.
    public struct FlavorText: Codable, Sendable {
        /// The entry, with the games' line breaks and form feeds.
        public let flavorText: String
        /// Its language.
        public let language: NamedResource
        /// The game version.
        public let version: NamedResource
    }

    /// The national dex number.
    public let id: Int
    /// The name.
    public let name: String
    /// The genera, one per language.
    public let genera: [Genus]
    /// The Pokédex entries.
    public let flavorTextEntries: [FlavorText]
    /// Whether it is legendary.
    public let isLegendary: Bool
    /// Whether it is mythical.
    public let isMythical: Bool

    /// The English genus, if any.
    public var englishGenus: String? {
        genera.first { $0.language.name == "en" }?.genus
    }

    /// The first English Pokédex entry, with the games' line breaks turned into spaces.
    public var englishFlavorText: String? {
        guard let entry = flavorTextEntries.first(where: { $0.language.name == "en" }) else { return nil }
        let separators = CharacterSet(charactersIn: "\n\u{0C}\r\u{AD}")
        return entry.flavorText.components(separatedBy: separators).filter { !$0.isEmpty }.joined(separator: " ")
    }
}
