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
    /// The transport that sends the requests.
    public var transport = TransportChoice.platformDefault

    /// Which transport sends the requests (`--transport`).
    public enum TransportChoice: String, Sendable, Equatable, CaseIterable {
        /// `CurlTransport` (NetworkAgentCurl): libcurl driven directly.
        case curl
        /// `URLSessionTransport`: URLSession (FoundationNetworking on Linux).
        case urlSession = "urlsession"

        /// The curl transport on Linux, where it is many times faster than FoundationNetworking and sees the
        /// compressed bytes and the per-phase timings; URLSession on Apple platforms, where it is the system's own.
        public static var platformDefault: TransportChoice {
            #if os(Linux)
            .curl
            #else
            .urlSession
            #endif
        }
    }

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
          --chaos RATE          the mirror fails this share of requests (0...1) with 503s and resets,
                                and is down for a second after its 60th request
          --auth                the mirror demands short-lived Bearer tokens
          --token-lifetime S    how long the mirror's tokens last (default 30)
          --transport NAME      curl or urlsession (default: curl on Linux, urlsession elsewhere)
          --help, --version
        """

    /// Parses arguments (without the program name).
    ///
    /// - Throws: ``PokedexError/usage(_:)`` with one line saying what is wrong.
    public static func parse(_ arguments: [String]) throws -> PokedexOptions {
        var options = PokedexOptions()
        var reader = ArgumentReader(arguments)
        var words = CommandWords()
        while let argument = reader.next() {
            guard try options.apply(argument, from: &reader, to: &words) else { return options }
        }
        options.command = try words.command()
        return options
    }

    /// Applies one argument: an option to these options, a number to `words`, anything else to its positional
    /// words.
    ///
    /// - Returns: `false` when the argument ends parsing (`--help`, `--version`).
    private mutating func apply(
        _ argument: String,
        from reader: inout ArgumentReader,
        to words: inout CommandWords
    ) throws -> Bool {
        switch argument {
        case "--help", "-h": command = .help; return false
        case "--version": command = .version; return false
        case "--base-url": baseURL = try reader.httpURL(for: argument)
        case "--cache-dir": cacheDirectory = URL(fileURLWithPath: try reader.value(for: argument))
        case "--no-cache": noCache = true
        case "--offline": offline = true
        case "--verbose", "-v": verbose = true
        case "--metrics": metrics = true
        case "--json": json = true
        case "--auth": auth = true
        case "--limit": words.limit = try reader.number(for: argument, in: 1...100_000)
        case "--offset": words.offset = try reader.number(for: argument, in: 0...100_000)
        case "--port": words.port = try reader.number(for: argument, in: 0...65_535)
        case "--chaos": chaosRate = try reader.rate(for: argument)
        case "--token-lifetime": tokenLifetime = try reader.seconds(for: argument)
        case "--transport":
            let name = try reader.value(for: argument)
            guard let choice = TransportChoice(rawValue: name) else {
                throw PokedexError.usage("--transport needs curl or urlsession, not \"\(name)\"")
            }
            transport = choice
        case let flag where flag.hasPrefix("-") && flag.count > 1 && Int(flag) == nil:
            throw PokedexError.usage("unknown option \(flag) (see pokedex --help)")
        default:
            words.positional.append(argument)
        }
        return true
    }
}

/// Hands out the arguments one at a time, and the value that follows an option, checked.
private struct ArgumentReader {
    private var iterator: IndexingIterator<[String]>

    init(_ arguments: [String]) {
        iterator = arguments.makeIterator()
    }

    mutating func next() -> String? {
        iterator.next()
    }

    /// The argument after `flag`.
    mutating func value(for flag: String) throws -> String {
        guard let value = iterator.next() else { throw PokedexError.usage("\(flag) needs a value") }
        return value
    }

    /// The whole number in `range` after `flag`.
    mutating func number(for flag: String, in range: ClosedRange<Int>) throws -> Int {
        let text = try value(for: flag)
        guard let number = Int(text), range.contains(number) else {
            throw PokedexError.usage(
                "\(flag) needs a whole number in \(range.lowerBound)...\(range.upperBound), not \"\(text)\""
            )
        }
        return number
    }

    /// The http(s) URL with a host after `flag` (`--base-url`).
    mutating func httpURL(for flag: String) throws -> URL {
        let text = try value(for: flag)
        guard let url = URL(string: text), let scheme = url.scheme, ["http", "https"].contains(scheme),
            url.host != nil
        else { throw PokedexError.usage("\(flag) needs an http(s) URL, not \"\(text)\"") }
        return url
    }

    /// The rate in `0...1` after `flag` (`--chaos`).
    mutating func rate(for flag: String) throws -> Double {
        let text = try value(for: flag)
        guard let rate = Double(text), (0...1).contains(rate) else {
            throw PokedexError.usage("\(flag) needs a rate between 0 and 1, not \"\(text)\"")
        }
        return rate
    }

    /// The positive number of seconds after `flag` (`--token-lifetime`).
    mutating func seconds(for flag: String) throws -> Double {
        let text = try value(for: flag)
        guard let seconds = Double(text), seconds > 0 else {
            throw PokedexError.usage("\(flag) needs a positive number of seconds, not \"\(text)\"")
        }
        return seconds
    }
}

/// The words that are not options, and the numbers the commands take, until they become a command.
private struct CommandWords {
    var positional: [String] = []
    var limit = 20
    var offset = 0
    var port = 0

    /// The command the words name, with its arguments.
    func command() throws -> PokedexOptions.Command {
        guard let name = positional.first else { throw PokedexError.usage("no command (see pokedex --help)") }
        let rest = Array(positional.dropFirst())
        func single(_ what: String) throws -> String {
            guard rest.count == 1 else { throw PokedexError.usage("\(name) needs exactly one \(what)") }
            return rest[0]
        }
        let command: PokedexOptions.Command
        switch name {
        case "list": command = .list(limit: limit, offset: offset)
        case "show": command = .show(try single("name or id"))
        case "type": command = .type(try single("type name"))
        case "search": command = .search(try single("text"))
        case "sync": command = .sync
        case "serve": command = .serve(port: port)
        case "help": command = .help
        default: throw PokedexError.usage("unknown command \"\(name)\" (see pokedex --help)")
        }
        if ["list", "sync", "serve"].contains(name), !rest.isEmpty {
            throw PokedexError.usage("\(name) takes no argument \"\(rest[0])\"")
        }
        return command
    }
}
