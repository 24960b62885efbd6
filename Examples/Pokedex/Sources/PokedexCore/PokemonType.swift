import Foundation

/// A type, as `/type/{id or name}/` describes it.
public struct PokemonType: Codable, Sendable {
    /// How this type fares against others.
    public struct DamageRelations: Codable, Sendable {
        /// Types that deal double damage to this one.
        public let doubleDamageFrom: [NamedResource]
        /// Types this one deals double damage to.
        public let doubleDamageTo: [NamedResource]
        /// Types that deal half damage to this one.
        public let halfDamageFrom: [NamedResource]
        /// Types this one deals half damage to.
        public let halfDamageTo: [NamedResource]
        /// Types that deal no damage to this one.
        public let noDamageFrom: [NamedResource]
        /// Types this one deals no damage to.
        public let noDamageTo: [NamedResource]
    }

    /// A pokemon of this type.
    public struct Member: Codable, Sendable {
        /// The pokemon.
        public let pokemon: NamedResource
        /// Its slot for this type.
        public let slot: Int
    }

    /// The type's id.
    public let id: Int
    /// The name, e.g. `fire`.
    public let name: String
    /// The damage relations.
    public let damageRelations: DamageRelations
    /// The pokemon of this type (all generations).
    public let pokemon: [Member]
}
