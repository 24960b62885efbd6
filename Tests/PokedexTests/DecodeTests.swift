import Foundation
import PokedexCore
import Testing

/// The live API's full payloads (moves and all, absolute or relative URLs) decode into the example's models.
@Suite struct DecodeTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures")

    let decoder: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        return decoder
    }()

    func fixture(_ name: String) throws -> Data {
        try Data(contentsOf: Self.fixtures.appendingPathComponent(name))
    }

    @Test(arguments: [
        (6, "charizard", ["fire", "flying"]), (25, "pikachu", ["electric"]), (150, "mewtwo", ["psychic"]),
    ])
    func fullPokemonPayloadsDecode(id: Int, name: String, types: [String]) throws {
        let pokemon = try decoder.decode(Pokemon.self, from: fixture("full-pokemon-\(id).json"))
        #expect(pokemon.id == id)
        #expect(pokemon.name == name)
        #expect(pokemon.types.map(\.type.name) == types)
        #expect(pokemon.stats.count == 6)
        #expect(pokemon.species.id == id)
    }

    @Test(arguments: [(6, "Flame Pokémon"), (25, "Mouse Pokémon"), (150, "Genetic Pokémon")])
    func fullSpeciesPayloadsDecode(id: Int, genus: String) throws {
        let species = try decoder.decode(PokemonSpecies.self, from: fixture("full-pokemon-species-\(id).json"))
        #expect(species.id == id)
        #expect(species.englishGenus == genus)
        let text = try #require(species.englishFlavorText)
        #expect(!text.contains("\n") && !text.contains("\u{0C}"))
        #expect(species.isLegendary == (id == 150))
    }

    @Test func relativeAndAbsoluteURLsBothGiveIds() throws {
        let json = #"[{"name":"a","url":"/api/v2/type/13/"},{"name":"b","url":"https://pokeapi.co/api/v2/type/14/"}]"#
        let resources = try decoder.decode([NamedResource].self, from: Data(json.utf8))
        #expect(resources.map(\.id) == [13, 14])
    }
}
