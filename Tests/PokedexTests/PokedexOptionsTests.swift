import Foundation
import PokedexCore
import Testing

/// `PokedexOptions.parse` in process: every option, every command, and the first error of each bad command line.
@Suite("PokedexOptions.parse")
struct PokedexOptionsTests {
    @Test("options and commands parse to their values")
    func parsesEverything() throws {
        let options = try PokedexOptions.parse([
            "--base-url", "http://127.0.0.1:8080/api/v2", "--cache-dir", "/tmp/pokedex", "--no-cache", "--offline",
            "-v", "--metrics", "--json", "--auth", "--chaos", "0.25", "--token-lifetime", "2.5",
            "list", "--limit", "5", "--offset", "7",
        ])
        #expect(options.command == .list(limit: 5, offset: 7))
        #expect(options.baseURL == URL(string: "http://127.0.0.1:8080/api/v2"))
        #expect(options.cacheDirectory == URL(fileURLWithPath: "/tmp/pokedex"))
        #expect(options.noCache && options.offline && options.verbose && options.metrics && options.json)
        #expect(options.auth && options.chaosRate == 0.25 && options.tokenLifetime == 2.5)

        #expect(try PokedexOptions.parse(["list"]).command == .list(limit: 20, offset: 0))
        #expect(try PokedexOptions.parse(["show", "-1"]).command == .show("-1"))
        #expect(try PokedexOptions.parse(["type", "fire"]).command == .type("fire"))
        #expect(try PokedexOptions.parse(["search", "char"]).command == .search("char"))
        #expect(try PokedexOptions.parse(["sync"]).command == .sync)
        #expect(try PokedexOptions.parse(["serve", "--port", "9000"]).command == .serve(port: 9000))
        #expect(try PokedexOptions.parse(["help"]).command == .help)
        #expect(try PokedexOptions.parse(["--json", "--version", "--bogus"]).command == .version)
        let help = try PokedexOptions.parse(["--json", "-h", "--bogus"])
        #expect(help.command == .help && help.json)
        #expect(try PokedexOptions.parse(["--transport", "urlsession", "sync"]).transport == .urlSession)
        #expect(try PokedexOptions.parse(["--transport", "curl", "sync"]).transport == .curl)
    }

    @Test("the curl transport is the default on Linux only")
    func defaultTransport() throws {
        #if os(Linux)
        #expect(try PokedexOptions.parse(["sync"]).transport == .curl)
        #else
        #expect(try PokedexOptions.parse(["sync"]).transport == .urlSession)
        #endif
    }

    @Test(
        "each bad command line fails with its one-line usage error",
        arguments: [
            (["--limit"], "--limit needs a value"),
            (["list", "--limit", "0"], "--limit needs a whole number in 1...100000, not \"0\""),
            (["list", "--offset", "x"], "--offset needs a whole number in 0...100000, not \"x\""),
            (["serve", "--port", "70000"], "--port needs a whole number in 0...65535, not \"70000\""),
            (["--base-url", "ftp://x", "list"], "--base-url needs an http(s) URL, not \"ftp://x\""),
            (["--chaos", "2", "sync"], "--chaos needs a rate between 0 and 1, not \"2\""),
            (["--token-lifetime", "0", "sync"], "--token-lifetime needs a positive number of seconds, not \"0\""),
            (["--bogus", "list"], "unknown option --bogus (see pokedex --help)"),
            ([], "no command (see pokedex --help)"),
            (["fly"], "unknown command \"fly\" (see pokedex --help)"),
            (["show"], "show needs exactly one name or id"),
            (["type", "a", "b"], "type needs exactly one type name"),
            (["search"], "search needs exactly one text"),
            (["sync", "now"], "sync takes no argument \"now\""),
            (["--transport", "nio", "sync"], "--transport needs curl or urlsession, not \"nio\""),
            (["--transport"], "--transport needs a value"),
        ]
    )
    func usageErrors(arguments: [String], message: String) {
        #expect(throws: PokedexError.usage(message)) { try PokedexOptions.parse(arguments) }
    }
}
