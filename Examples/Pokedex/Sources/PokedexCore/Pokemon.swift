import Foundation

/// A pokemon, as `/pokemon/{id or name}/` describes it (only the fields the example uses; the rest is ignored).
public struct Pokemon: Codable, Sendable {
    /// A type slot.
    public struct TypeSlot: Codable, Sendable {
        /// The slot, 1 or 2.
        public let slot: Int
        /// The type.
        public let type: NamedResource
    }

    /// An ability slot.
    public struct AbilitySlot: Codable, Sendable {
        /// The ability.
        public let ability: NamedResource
        /// Whether it is the hidden ability.
        public let isHidden: Bool
        /// The slot.
        public let slot: Int
    }

    /// A base stat.
    public struct Stat: Codable, Sendable {
        /// The base value.
        public let baseStat: Int
        /// The effort value yielded.
        public let effort: Int
        /// Which stat.
        public let stat: NamedResource
    }

    /// The national dex number.
    public let id: Int
    /// The name, e.g. `pikachu`.
    public let name: String
    /// Height in decimetres.
    public let height: Int
    /// Weight in hectograms.
    public let weight: Int
    /// The types, by slot.
    public let types: [TypeSlot]
    /// The abilities.
    public let abilities: [AbilitySlot]
    /// The base stats.
    public let stats: [Stat]
    /// The species, for genus and flavour text.
    public let species: NamedResource

    /// Height in metres.
    public var heightInMetres: Double { Double(height) / 10 }
    /// Weight in kilograms.
    public var weightInKilograms: Double { Double(weight) / 10 }
}
