import Foundation

/// The parsed command line.
public struct PokedexOptions: Sendable, Equatable {
    /// The command to run.
    public enum Command: Sendable, Equatable {
        case list(limit: Int, offset: Int)
        case show(String)
        case type(String)
        case search(String)
        case sync
        case serve(port: Int)
        case help
        case version
    }

    /// The command.
    public var command: Command = .help
    /// The API's base URL; `nil` starts the offline mirror in-process.
    public var baseURL: URL?
    /// Where the HTTP cache lives.
    public var cacheDirectory: URL?
    /// No HTTP cache at all.
    public var noCache = false
    /// Answer from the cache only.
    public var offline = false
    /// Log requests (the logging plugin) to standard error.
    public var verbose = false
    /// Print the metrics plugin's Prometheus exposition to standard error at exit.
    public var metrics = false
    /// Print JSON instead of text.
    public var json = false
    /// The mirror's chaos rate (for `serve` and the in-process mirror).
    public var chaosRate: Double = 0
    /// Whether the mirror demands tokens (for `serve` and the in-process mirror).
    public var auth = false
    /// How long the mirror's tokens last, in seconds.
    public var tokenLifetime: Double = 30

    /// The usage text.
    public static let usage = """
        usage: pokedex [options] <command>

        commands:
          list [--limit N] [--offset N]   list pokemon (default: 20 from 0)
          show <name|id>                  a pokemon: types, size, abilities, genus, entry, base stats
          type <name>                     a type's damage relations and its pokemon
          search <text>                   names containing the text (over all 1351 pokemon)
          sync                            fetch every Generation I pokemon into the cache
          serve [--port N]                run the offline PokeAPI mirror alone

        options:
          --base-url URL        the API, e.g. https://pokeapi.co/api/v2 (default: the built-in offline mirror)
          --cache-dir DIR       where the HTTP cache lives (default: the user's cache directory)
          --no-cache            no HTTP cache
          --offline             answer from the cache only
          --verbose             log every request to standard error
          --metrics             print Prometheus metrics to standard error at exit
          --json                print JSON
          --chaos RATE          the mirror fails this share of requests (0...1) with 503s and resets
          --auth                the mirror demands short-lived Bearer tokens
          --token-lifetime S    how long the mirror's tokens last (default 30)
          --help, --version
        """

    /// Parses arguments (without the program name).
    ///
    /// - Throws: ``PokedexError/usage(_:)`` with one line saying what is wrong.
    public static func parse(_ arguments: [String]) throws -> PokedexOptions {
        var options = PokedexOptions()
        var positional: [String] = []
        var limit = 20
        var offset = 0
        var port = 0
        var iterator = arguments.makeIterator()

        func value(for flag: String) throws -> String {
            guard let value = iterator.next() else { throw PokedexError.usage("\(flag) needs a value") }
            return value
        }
        func number(for flag: String, in range: ClosedRange<Int>) throws -> Int {
            let text = try value(for: flag)
            guard let number = Int(text), range.contains(number) else {
                throw PokedexError.usage(
                    "\(flag) needs a whole number in \(range.lowerBound)...\(range.upperBound), not \"\(text)\""
                )
            }
            return number
        }

        while let argument = iterator.next() {
            switch argument {
            case "--help", "-h": options.command = .help; return options
            case "--version": options.command = .version; return options
            case "--base-url":
                let text = try value(for: argument)
                guard let url = URL(string: text), let scheme = url.scheme, ["http", "https"].contains(scheme),
                    url.host != nil
                else { throw PokedexError.usage("--base-url needs an http(s) URL, not \"\(text)\"") }
                options.baseURL = url
            case "--cache-dir": options.cacheDirectory = URL(fileURLWithPath: try value(for: argument))
            case "--no-cache": options.noCache = true
            case "--offline": options.offline = true
            case "--verbose", "-v": options.verbose = true
            case "--metrics": options.metrics = true
            case "--json": options.json = true
            case "--auth": options.auth = true
            case "--limit": limit = try number(for: argument, in: 1...100_000)
            case "--offset": offset = try number(for: argument, in: 0...100_000)
            case "--port": port = try number(for: argument, in: 0...65_535)
            case "--chaos":
                let text = try value(for: argument)
                guard let rate = Double(text), (0...1).contains(rate) else {
                    throw PokedexError.usage("--chaos needs a rate between 0 and 1, not \"\(text)\"")
                }
                options.chaosRate = rate
            case "--token-lifetime":
                let text = try value(for: argument)
                guard let seconds = Double(text), seconds > 0 else {
                    throw PokedexError.usage("--token-lifetime needs a positive number of seconds, not \"\(text)\"")
                }
                options.tokenLifetime = seconds
            case let flag where flag.hasPrefix("-") && flag.count > 1 && Int(flag) == nil:
                throw PokedexError.usage("unknown option \(flag) (see pokedex --help)")
            default:
                positional.append(argument)
            }
        }
        guard let name = positional.first else { throw PokedexError.usage("no command (see pokedex --help)") }
        let rest = Array(positional.dropFirst())
        func single(_ what: String) throws -> String {
            guard rest.count == 1 else { throw PokedexError.usage("\(name) needs exactly one \(what)") }
            return rest[0]
        }
        switch name {
        case "list": options.command = .list(limit: limit, offset: offset)
        case "show": options.command = .show(try single("name or id"))
        case "type": options.command = .type(try single("type name"))
        case "search": options.command = .search(try single("text"))
        case "sync": options.command = .sync
        case "serve": options.command = .serve(port: port)
        case "help": options.command = .help
        default: throw PokedexError.usage("unknown command \"\(name)\" (see pokedex --help)")
        }
        if ["list", "sync", "serve"].contains(name), !rest.isEmpty {
            throw PokedexError.usage("\(name) takes no argument \"\(rest[0])\"")
        }
        return options
    }
}
