import Foundation

/// Turns decoded resources into the text the CLI prints.
public struct Renderer: Sendable {
    let terminal: Terminal

    /// Creates a renderer for a terminal.
    public init(terminal: Terminal) {
        self.terminal = terminal
    }

    /// ANSI colours of the eighteen types, for a terminal.
    private static let typeColors: [String: Int] = [
        "normal": 144, "fire": 202, "water": 33, "electric": 220, "grass": 70, "ice": 117, "fighting": 160,
        "poison": 129, "ground": 179, "flying": 111, "psychic": 205, "bug": 106, "rock": 137, "ghost": 61,
        "dragon": 63, "dark": 94, "steel": 146, "fairy": 218,
    ]

    func typeName(_ name: String) -> String {
        terminal.color(name, Self.typeColors[name] ?? 250)
    }

    static func title(_ name: String) -> String {
        name.split(separator: "-").map { $0.prefix(1).uppercased() + $0.dropFirst() }.joined(separator: "-")
    }

    /// A page of the list: `#id name` per line, then where the next page is.
    public func list(_ page: ResourceList, offset: Int) -> String {
        var lines = page.results.enumerated().map { index, item in
            "#\(item.id.map(String.init) ?? String(offset + index + 1)) \(item.name)"
        }
        lines.append(
            terminal.dim(
                "\(page.results.count) of \(page.count)"
                    + (page.next != nil ? ", more with --offset \(offset + page.results.count)" : "")
            )
        )
        return lines.joined(separator: "\n")
    }

    /// A pokemon with its species: name, genus, types, size, abilities, entry and base stats as bars.
    public func show(_ pokemon: Pokemon, species: PokemonSpecies?) -> String {
        var lines: [String] = []
        let genus = species?.englishGenus.map { " — \($0)" } ?? ""
        lines.append(terminal.bold("#\(pokemon.id) \(Self.title(pokemon.name))") + genus)
        lines.append(
            "Types:     "
                + pokemon.types.sorted { $0.slot < $1.slot }.map { typeName($0.type.name) }.joined(separator: ", ")
        )
        lines.append(String(format: "Height:    %.1f m", pokemon.heightInMetres))
        lines.append(String(format: "Weight:    %.1f kg", pokemon.weightInKilograms))
        let abilities = pokemon.abilities.sorted { $0.slot < $1.slot }.map {
            $0.ability.name + ($0.isHidden ? " (hidden)" : "")
        }
        lines.append("Abilities: " + abilities.joined(separator: ", "))
        if let text = species?.englishFlavorText {
            lines.append("")
            lines.append(terminal.dim("“\(text)”"))
        }
        lines.append("")
        lines.append("Base stats:")
        for stat in pokemon.stats {
            let bar = String(repeating: "█", count: max(1, stat.baseStat / 10))
            let name = stat.stat.name.padding(toLength: 16, withPad: " ", startingAt: 0)
            let value = String(stat.baseStat).leftPadded(to: 4)
            lines.append(
                "  \(name)\(value) \(terminal.color(bar, stat.baseStat >= 90 ? 70 : stat.baseStat >= 60 ? 220 : 202))"
            )
        }
        lines.append(
            "  " + "total".padding(toLength: 16, withPad: " ", startingAt: 0)
                + String(pokemon.stats.reduce(0) { $0 + $1.baseStat }).leftPadded(to: 4)
        )
        return lines.joined(separator: "\n")
    }

    /// A type's damage relations both ways and its pokemon.
    public func type(_ type: PokemonType) -> String {
        let relations = type.damageRelations
        func row(_ label: String, _ types: [NamedResource]) -> String {
            label.padding(toLength: 26, withPad: " ", startingAt: 0)
                + (types.isEmpty ? terminal.dim("—") : types.map { typeName($0.name) }.joined(separator: ", "))
        }
        var lines = [terminal.bold("Type \(typeName(type.name))"), ""]
        lines.append(terminal.bold("Defending"))
        lines.append(row("  double damage from", relations.doubleDamageFrom))
        lines.append(row("  half damage from", relations.halfDamageFrom))
        lines.append(row("  no damage from", relations.noDamageFrom))
        lines.append(terminal.bold("Attacking"))
        lines.append(row("  double damage to", relations.doubleDamageTo))
        lines.append(row("  half damage to", relations.halfDamageTo))
        lines.append(row("  no damage to", relations.noDamageTo))
        lines.append("")
        lines.append(terminal.bold("Pokemon (\(type.pokemon.count))"))
        lines.append(type.pokemon.map(\.pokemon.name).joined(separator: ", "))
        return lines.joined(separator: "\n")
    }

    /// The names matching a search, one per line, or a note that none did.
    public func search(_ matches: [NamedResource], query: String) -> String {
        guard !matches.isEmpty else { return terminal.dim("no pokemon name contains \"\(query)\"") }
        return matches.map { "#\($0.id.map(String.init) ?? "?") \($0.name)" }.joined(separator: "\n")
    }
}

extension String {
    func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: " ", count: width - count) + self
    }
}
