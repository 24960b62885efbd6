import Foundation
import NetworkAgent
import NetworkAgentCurl
import NetworkAgentMetrics

/// The `pokedex` command: parses arguments, starts the offline mirror when no `--base-url` is given, runs the
/// command and prints its result.
public enum PokedexCLI {
    /// The example's version.
    public static let version = "1.0.0"

    /// Runs the command line and returns the exit status.
    ///
    /// - Parameter arguments: The arguments without the program name.
    /// - Returns: 0 on success, 1 on failure (one line on standard error), 2 on a usage error.
    public static func run(_ arguments: [String]) async -> Int32 {
        let options: PokedexOptions
        do {
            options = try PokedexOptions.parse(arguments)
        } catch {
            Terminal.error("pokedex: \(error)")
            return 2
        }
        do {
            try await run(options, terminal: Terminal())
            return 0
        } catch let error as PokedexError {
            Terminal.error("pokedex: \(error)")
            return 1
        } catch {
            Terminal.error("pokedex: \(error)")
            return 1
        }
    }

    /// The transport `--transport` picks.
    static func makeTransport(_ choice: PokedexOptions.TransportChoice) -> any HTTPTransport {
        switch choice {
        case .curl: CurlTransport()
        case .urlSession: URLSessionTransport()
        }
    }

    /// The mirror's settings from the command line. In-process, its links name the stable origin the client uses
    /// (``MirrorRoutingTransport/mirrorOrigin``), so logs, output and cache show one host; `serve` names whatever
    /// host its clients asked for.
    static func mirrorOptions(_ options: PokedexOptions, inProcess: Bool) -> PokeAPIMirror.Options {
        var mirror = PokeAPIMirror.Options()
        if inProcess { mirror.origin = MirrorRoutingTransport.mirrorOrigin }
        mirror.chaosRate = options.chaosRate
        if options.chaosRate > 0 { mirror.outage = chaosOutage }
        mirror.requiresAuth = options.auth
        mirror.tokenLifetime = .milliseconds(Int64(options.tokenLifetime * 1000))
        return mirror
    }

    /// The outage `--chaos` adds: a second in which the mirror fails everything, early in a `sync` (never in a
    /// single `show`), long enough for the circuit breaker to open, fail a probe, and close once it heals.
    static let chaosOutage = PokeAPIMirror.Outage(after: 60, duration: .seconds(1))

    static func run(_ options: PokedexOptions, terminal: Terminal) async throws {
        switch options.command {
        case .help:
            Terminal.output(PokedexOptions.usage)
            return
        case .version:
            Terminal.output("pokedex \(version) (NetworkAgent \(NetworkAgentConfiguration.libraryVersion))")
            return
        case .serve(let port):
            let mirror = try PokeAPIMirror(port: port, options: mirrorOptions(options, inProcess: false))
            Terminal.output("PokeAPI mirror on \(mirror.baseURL.absoluteString) (Ctrl-C to stop)")
            while !Task.isCancelled { try await Task.sleep(for: .seconds(3600)) }
            return
        default:
            break
        }

        // Without --base-url the mirror runs in this process; the client reaches it through a stable origin, so the
        // cache filled by one run serves the next, whatever port the mirror gets.
        var mirror: PokeAPIMirror?
        if options.baseURL == nil, !options.offline {
            mirror = try PokeAPIMirror(options: mirrorOptions(options, inProcess: true))
        }
        defer { mirror?.stop() }
        let baseURL = options.baseURL ?? MirrorRoutingTransport.mirrorOrigin.appendingPathComponent("api/v2")
        let base = Self.makeTransport(options.transport)
        let transport = MirrorRoutingTransport(
            base: base,
            mirror: mirror.map { URL(string: "http://127.0.0.1:\($0.port)")! }
        )
        // A CurlTransport is ended explicitly, whatever the command's outcome: its thread and connections end here,
        // not whenever the last reference goes (NetworkAgentCurl reports a transport dropped without it in debug
        // builds).
        let outcome: Result<Void, any Error>
        do {
            try await NetworkAgentEvents.observing(Self.reportCircuitChanges) {
                try await perform(options, baseURL: baseURL, transport: transport, terminal: terminal)
            }
            outcome = .success(())
        } catch {
            outcome = .failure(error)
        }
        await (base as? CurlTransport)?.shutdown()
        try outcome.get()
    }

    /// Prints each change of a circuit breaker's state on standard error, e.g.
    /// `pokedex: circuit http://pokeapi.mirror:80 closed -> open (failing fast for 520 ms)`.
    @Sendable static func reportCircuitChanges(_ event: NetworkAgentEvent) {
        guard case .circuitStateChanged(let key, let from, let to) = event.kind else { return }
        let detail =
            switch to {
            case .open: event.attributes["open_ms"].map { " (failing fast for \($0) ms)" } ?? ""
            case .halfOpen: " (letting probes through)"
            case .closed: " (the server answers again)"
            }
        Terminal.error("pokedex: circuit \(key) \(from.rawValue) -> \(to.rawValue)\(detail)")
    }

    /// Runs a command that talks to the API through `transport`.
    static func perform(
        _ options: PokedexOptions,
        baseURL: URL,
        transport: MirrorRoutingTransport,
        terminal: Terminal
    ) async throws {
        let client = try await PokedexClient(options: options, baseURL: baseURL, transport: transport)
        defer {
            if let metrics = client.metrics { Terminal.error(metrics.prometheusText(), terminator: "") }
        }
        let repository = PokedexRepository(provider: client.provider, baseURL: baseURL, offline: options.offline)
        let renderer = Renderer(terminal: terminal)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        encoder.keyEncodingStrategy = .convertToSnakeCase

        switch options.command {
        case .list(let limit, let offset):
            let page = try await repository.list(limit: limit, offset: offset)
            Terminal.output(
                options.json
                    ? String(decoding: try encoder.encode(page), as: UTF8.self) : renderer.list(page, offset: offset)
            )
        case .show(let name):
            let pokemon = try await pokemon(
                name,
                repository: repository,
                offline: options.offline,
                mirror: options.baseURL == nil
            )
            let species = try? await repository.species(pokemon.species.name)
            Terminal.output(
                options.json
                    ? String(decoding: try encoder.encode(pokemon), as: UTF8.self)
                    : renderer.show(pokemon, species: species)
            )
        case .type(let name):
            let type = try await repository.type(name)
            Terminal.output(
                options.json ? String(decoding: try encoder.encode(type), as: UTF8.self) : renderer.type(type)
            )
        case .search(let text):
            let query = text.lowercased()
            let matches = try await repository.allNames().filter { $0.name.contains(query) }
            Terminal.output(
                options.json
                    ? String(decoding: try encoder.encode(matches), as: UTF8.self)
                    : renderer.search(matches, query: query)
            )
        case .sync:
            try await sync(repository: repository, terminal: terminal)
        case .help, .version, .serve:
            break
        }
    }

    /// The Generation I pokemon, as the list's first page names them.
    static let generationOne = (limit: 151, offset: 0)

    /// Fetches the Generation I list, then every Generation I pokemon and species by name, eight at a time, with a
    /// progress bar on a terminal (a summary line otherwise). Everything lands in the cache for `--offline`.
    static func sync(repository: PokedexRepository, terminal: Terminal) async throws {
        let start = ContinuousClock.now
        let names = try await repository.list(limit: generationOne.limit, offset: generationOne.offset).results.map(
            \.name
        )
        let total = names.count * 2
        var done = 0
        var failures: [String] = []
        try await withThrowingTaskGroup(of: String?.self) { group in
            var pending = names.makeIterator()
            func enqueue() {
                guard let name = pending.next() else { return }
                group.addTask {
                    do {
                        let pokemon = try await waitingForCircuit { try await repository.pokemon(name) }
                        _ = try await waitingForCircuit { try await repository.species(pokemon.species.name) }
                        return nil
                    } catch {
                        return "\(name): \(error)"
                    }
                }
            }
            for _ in 0..<8 { enqueue() }
            while let result = try await group.next() {
                done += 2
                if let failure = result { failures.append(failure) }
                if terminal.isInteractive {
                    let width = 30
                    let filled = done * width / total
                    let bar = String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled)
                    Terminal.output("\r[\(bar)] \(done)/\(total)", terminator: "")
                }
                enqueue()
            }
        }
        if terminal.isInteractive { Terminal.output("") }
        let elapsed = String(format: "%.1f", start.duration(to: .now).timeInterval)
        Terminal.output("synced \(total - failures.count * 2) of \(total) resources in \(elapsed) s")
        if let first = failures.first {
            throw PokedexError.unreachable("\(failures.count) pokemon failed to sync, first \(first)")
        }
    }

    /// How long `sync` keeps waiting for an open circuit to let one of its requests through before it counts the
    /// request as failed.
    static let circuitPatience: Duration = .seconds(15)

    /// Runs `fetch`, and when the circuit breaker failed it fast, waits as long as the circuit says it stays open (a
    /// tenth of a second while its probes are in flight) and runs it again, for up to ``circuitPatience``.
    static func waitingForCircuit<T: Sendable>(_ fetch: () async throws -> T) async throws -> T {
        let deadline = ContinuousClock.now + circuitPatience
        while true {
            do {
                return try await fetch()
            } catch PokedexError.circuitOpen(_, let retryAfter) where ContinuousClock.now < deadline {
                try await Task.sleep(for: max(retryAfter ?? .milliseconds(100), .milliseconds(10)))
            }
        }
    }

    /// A pokemon by name, or by id — offline, an id is looked up in the cached Generation I list.
    ///
    /// From the built-in mirror (`mirror`: no `--base-url`), a pokemon beyond Generation I — an id outside 1...151,
    /// or a name the full index (what `search` shows) numbers above 151 — fails with
    /// ``PokedexError/notInMirror(_:)``, which says so and names the live API, rather than "no pokemon named" (or,
    /// offline, "run `pokedex sync`", which would not fetch it either).
    static func pokemon(
        _ name: String,
        repository: PokedexRepository,
        offline: Bool,
        mirror: Bool
    ) async throws -> Pokemon {
        if mirror, let id = Int(name), !(1...generationOne.limit).contains(id) { throw PokedexError.notInMirror(name) }
        do {
            return try await fetchPokemon(name, repository: repository, offline: offline)
        } catch let error as PokedexError where mirror {
            // Not found online, or not cached offline: beyond Generation I if the full name index (when it can be
            // had) gives it a higher id.
            switch error {
            case .notFound(kind: "pokemon", _), .notCached:
                let index = (try? await repository.allNames()) ?? []
                let id = index.first { $0.name == name.lowercased() }?.id
                if let id, !(1...generationOne.limit).contains(id) { throw PokedexError.notInMirror(name) }
                throw error
            default:
                throw error
            }
        }
    }

    private static func fetchPokemon(
        _ name: String,
        repository: PokedexRepository,
        offline: Bool
    ) async throws -> Pokemon {
        guard offline, let id = Int(name) else { return try await repository.pokemon(name) }
        let list = try await repository.list(limit: generationOne.limit, offset: generationOne.offset)
        guard let match = list.results.first(where: { $0.id == id }) else {
            throw PokedexError.notCached("pokemon \(name)")
        }
        return try await repository.pokemon(match.name)
    }
}
