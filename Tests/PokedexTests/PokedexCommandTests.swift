import Foundation
import NetworkAgentTestServer
import PokedexCore
import Testing

/// Runs the built `pokedex` binary, as a newcomer would.
struct PokedexRun {
    let status: Int32
    let output: String
    let error: String

    static var executable: URL {
        URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
            .appendingPathComponent("pokedex")
    }

    static func run(_ arguments: [String], environment: [String: String] = [:]) async throws -> PokedexRun {
        let result = try await ChildProcess.run(executable.path, arguments, environment: environment)
        return PokedexRun(status: result.status, output: result.output, error: result.error)
    }
}

@Suite struct PokedexCommandTests {
    let cache = FileManager.default.temporaryDirectory.appendingPathComponent("pokedex-tests-\(UUID().uuidString)")

    func run(_ arguments: [String]) async throws -> PokedexRun {
        try await PokedexRun.run(["--cache-dir", cache.path] + arguments)
    }

    @Test func listPrintsTheFirstThree() async throws {
        let run = try await run(["list", "--limit", "3"])
        #expect(run.status == 0)
        let names = run.output.split(separator: "\n").prefix(3).map { $0.split(separator: " ").last.map(String.init) }
        #expect(names == ["bulbasaur", "ivysaur", "venusaur"])
    }

    /// On each transport (the default one, curl on Linux, is what every other test here runs on).
    @Test(arguments: PokedexOptions.TransportChoice.allCases)
    func showPikachu(transport: PokedexOptions.TransportChoice) async throws {
        let run = try await run(["--transport", transport.rawValue, "show", "pikachu"])
        #expect(run.status == 0, "\(run.error)")
        #expect(run.output.contains("electric"))
        #expect(run.output.contains("Mouse Pokémon"))
        #expect(run.output.contains("0.4 m"))
        #expect(run.output.contains("6.0 kg"))
        #expect(!run.output.contains("\u{1B}["), "no colours when stdout is not a terminal")
    }

    @Test func showById() async throws {
        let run = try await run(["show", "150"])
        #expect(run.status == 0)
        #expect(run.output.contains("#150 Mewtwo"))
    }

    @Test func typeFireShowsWaterAmongDoubleDamageFrom() async throws {
        let run = try await run(["type", "fire"])
        #expect(run.status == 0)
        let line = try #require(run.output.split(separator: "\n").first { $0.contains("double damage from") })
        #expect(line.contains("water"))
    }

    @Test func unknownNameExitsNonZeroWithOneClearLine() async throws {
        let run = try await run(["show", "missingno"])
        #expect(run.status == 1)
        #expect(run.output.isEmpty)
        #expect(run.error == "pokedex: no pokemon named \"missingno\"\n")
    }

    @Test(
        "17.18 a pokemon the offline mirror does not hold says it has the first 151 and names the live API",
        arguments: [["show", "152"], ["show", "pichu"], ["show", "0"], ["--offline", "show", "152"]]
    )
    func beyondTheMirrorSaysSoInOneLine(arguments: [String]) async throws {
        let run = try await run(arguments)
        #expect(run.status == 1)
        #expect(run.output.isEmpty)
        #expect(run.error.split(separator: "\n").count == 1, "\(run.error)")
        #expect(run.error.contains("offline mirror holds only the first 151 pokemon"), "\(run.error)")
        #expect(run.error.contains("--base-url https://pokeapi.co/api/v2"), "\(run.error)")
        #expect(!run.error.contains("no pokemon named"))
    }

    @Test("17.18 offline, a name beyond Generation I says the mirror holds the first 151, not run sync")
    func offlineNameBeyondTheMirror() async throws {
        let search = try await run(["search", "pichu"])  // caches the full name index
        #expect(search.status == 0)
        let run = try await run(["--offline", "show", "pichu"])
        #expect(run.status == 1)
        #expect(run.error.contains("offline mirror holds only the first 151 pokemon"), "\(run.error)")
        #expect(!run.error.contains("pokedex sync"))
    }

    @Test("17.18 --verbose and the output name the mirror by one host throughout")
    func verboseNamesTheMirrorByOneHost() async throws {
        for arguments in [["--verbose", "show", "25"], ["--verbose", "list", "--limit", "3", "--offset", "3"]] {
            let run = try await run(arguments)
            #expect(run.status == 0, "\(run.error)")
            let hosts = Self.urlOrigins(in: run.error)
            #expect(run.error.contains("<-- 200 GET http://pokeapi.mirror/api/v2/"), "\(run.error)")
            #expect(hosts == ["http://pokeapi.mirror"], "\(run.error)")
        }
        // The mirror's payloads link to the same origin: what `--json` prints, and what the cache keeps.
        let json = try await run(["--json", "show", "25"])
        #expect(json.status == 0)
        #expect(Self.urlOrigins(in: json.output) == ["http://pokeapi.mirror"], "\(json.output.prefix(400))")
    }

    /// The distinct `scheme://host[:port]` of every http(s) URL in a text.
    static func urlOrigins(in text: String) -> Set<String> {
        var origins: Set<String> = []
        var rest = Substring(text)
        while let start = rest.range(of: "http://") ?? rest.range(of: "https://") {
            let url = rest[start.lowerBound...].prefix { !$0.isWhitespace && $0 != "\"" }
            let afterScheme = url[start.upperBound...]
            origins.insert(String(url[..<start.upperBound]) + afterScheme.prefix { $0 != "/" && $0 != "?" })
            rest = rest[start.upperBound...]
        }
        return origins
    }

    @Test(arguments: [
        ["--bogus", "list"], ["list", "--limit", "zero"], ["fly"], [], ["--base-url", "ftp://x", "list"],
    ])
    func badCommandLinesExitWithUsageErrors(arguments: [String]) async throws {
        let run = try await run(arguments)
        #expect(run.status == 2)
        #expect(run.error.hasPrefix("pokedex: "))
        #expect(run.error.split(separator: "\n").count == 1)
    }

    @Test func unreachableServerIsOneClearLine() async throws {
        let run = try await run(["--base-url", "http://127.0.0.1:1/api/v2", "show", "pikachu"])
        #expect(run.status == 1)
        #expect(run.error.hasPrefix("pokedex: cannot reach the Pokédex server"))
    }

    @Test func searchFindsNamesBeyondGenerationOne() async throws {
        let run = try await run(["search", "chu"])
        #expect(run.status == 0)
        #expect(run.output.contains("#25 pikachu"))
        #expect(run.output.contains("#172 pichu"))
    }

    @Test func jsonOutput() async throws {
        let run = try await run(["--json", "show", "bulbasaur"])
        let object = try JSONSerialization.jsonObject(with: Data(run.output.utf8)) as? [String: Any]
        #expect(object?["name"] as? String == "bulbasaur")
    }

    @Test func helpAndVersion() async throws {
        #expect(try await run(["--help"]).output.contains("usage: pokedex"))
        #expect(try await run(["--version"]).output.hasPrefix("pokedex 1.0.0"))
    }

    @Test func authModeWorksThroughTokenExpiry() async throws {
        // Chaos makes the sync last several seconds (the mirror's Retry-After is 1 s), so one-second tokens expire
        // during it whatever the machine's speed.
        let run = try await run(["--verbose", "--auth", "--token-lifetime", "1", "--chaos", "0.2", "sync"])
        #expect(run.status == 0, "\(run.error.suffix(500))")
        #expect(run.output.contains("synced 302 of 302"))
        let refreshes = run.error.split(separator: "\n").filter { $0.contains("token_refresh.refresh_succeeded") }
        #expect(refreshes.count >= 1, "tokens lasting 1 s must be refreshed during a sync of several seconds")
        #expect(!run.error.contains("Bearer "), "the log never shows a token")
    }

    @Test func verboseLogsEachRequestToStandardError() async throws {
        let run = try await run(["--verbose", "show", "25"])
        #expect(run.status == 0)
        #expect(run.error.contains("--> GET http://pokeapi.mirror/api/v2/pokemon/25/"))
        #expect(run.error.contains("<-- 200 GET"))
        #expect(!run.output.contains("-->"))
    }

    @Test func offlineAfterAWarmSyncNeedsNoNetwork() async throws {
        let sync = try await run(["sync"])
        #expect(sync.status == 0, "\(sync.error)")
        // --offline starts no mirror and its transport refuses to reach one: every answer comes from the cache.
        let byName = try await run(["--offline", "show", "mew"])
        #expect(byName.status == 0, "\(byName.error)")
        #expect(byName.output.contains("psychic"))
        let byId = try await run(["--offline", "show", "25"])
        #expect(byId.output.contains("#25 Pikachu"))
        let type = try await run(["--offline", "--metrics", "show", "1"])
        #expect(type.error.contains("result=\"hit\""))
        #expect(!type.error.contains("result=\"miss\""))
    }

    @Test func offlineWithAColdCacheSaysSoInOneLine() async throws {
        let run = try await run(["--offline", "show", "mew"])
        #expect(run.status == 1)
        #expect(run.error == "pokedex: pokemon mew is not in the cache (run `pokedex sync` while online)\n")
    }

    @Test func metricsArePrintedAsPrometheusText() async throws {
        let run = try await run(["--metrics", "show", "pikachu"])
        #expect(run.status == 0)
        #expect(run.error.contains("# TYPE networkagent_requests_total counter"))
        #expect(run.error.contains("route=\"/pokemon/{name}\""))
        #expect(!run.error.contains("pikachu"), "route labels are templates, never raw URLs")
    }

    /// `--chaos` fails 30 % of requests at random, which retries recover, and takes the mirror down for a second early
    /// in the sync, which opens the circuit breaker: calls fail fast, the sync waits as long as the circuit says, and
    /// the circuit closes once a probe finds the mirror healed. The sync still gets everything.
    @Test func chaosSyncCompletesThroughRetriesAndAnOutage() async throws {
        let run = try await run(["--verbose", "--chaos", "0.3", "sync"])
        #expect(run.status == 0, "\(run.error.suffix(800))")
        #expect(run.output.contains("synced 302 of 302"))
        let lines = run.error.split(separator: "\n")
        let retries = lines.filter { $0.contains("retry.retry_scheduled") }
        #expect(retries.count > 10, "a 30 % failure rate must have been retried")
        #expect(run.error.contains("reason=status_503") || run.error.contains("reason=503"))
        // The outage opens the mirror's circuit, and it closes again before the sync ends.
        let states = lines.filter { $0.hasPrefix("pokedex: circuit http://pokeapi.mirror:80 ") }.map {
            $0.split(separator: " ").prefix(6).suffix(3).joined(separator: " ")
        }
        #expect(states.first == "closed -> open", "\(states)")
        #expect(states.last == "half_open -> closed", "\(states)")
        #expect(states.contains("open -> half_open"), "\(states)")
        // The logging plugin logs the same changes; the rejected calls were failed fast, unsent.
        let logged = lines.filter { $0.contains("circuit_breaker.state_changed") }
        #expect(logged.count == states.count, "\(logged)")
        #expect(lines.contains { $0.contains("circuit_breaker.rejected") })
    }
}
