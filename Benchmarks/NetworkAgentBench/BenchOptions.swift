import Foundation

/// The command line of `networkagent-bench`.
struct BenchOptions: Sendable {
    /// What the process was started to do.
    enum Mode: Sendable, Equatable {
        /// Run scenarios and print the table (the normal mode).
        case bench
        /// Print the scenario names and what each measures.
        case list
        /// Print the usage.
        case help
        /// Hidden: serve the benchmark routes on loopback until standard input closes (the server process), and
        /// the file `gzipBody`, if given, at ``BenchRoutes/gzipBomb``.
        case serveLoopback(gzipBody: URL?)
        /// Hidden: upload one file through the provider and print the peak memory (the `upload_rss` child).
        case measureUpload(url: URL, file: URL)
        /// One process of `redis_coalesce` or `miss_coalesce` (hidden): the arguments after `--redis-worker`.
        case redisWorker([String])
        /// Hidden: one repetition of `breaker_overhead`'s in-process A/B, `requests` calls per side, in a fresh
        /// process (the `breaker_overhead` child).
        case measureBreaker(requests: Int)
    }

    /// Which HTTP server the scenarios talk to.
    enum ServerChoice: String, Sendable {
        /// nginx when installed, otherwise the loopback server.
        case automatic = "auto"
        case nginx
        case loopback
    }

    var mode: Mode = .bench
    /// Fewer and smaller repetitions, to finish in under a minute (CI).
    var quick = false
    /// Where to write the results as JSON.
    var jsonPath: String?
    var server: ServerChoice = .automatic
    /// The scenarios to run, in the order given; empty means all of them.
    var scenarios: [String] = []
    /// Where `overload_amplification` writes its origin-load-over-time figure (SVG), if anywhere.
    var svgPath: String?

    /// The number of repetitions of every measurement.
    var repetitions: Int { quick ? 3 : 5 }

    static let usage = """
        usage: networkagent-bench [--quick] [--json FILE] [--svg FILE] [--server auto|nginx|loopback] [SCENARIO...]
               networkagent-bench --list

          --quick          3 repetitions of smaller workloads (under a minute); the default is 5 full ones
          --json FILE      also write the results to FILE as {"scenarios": [...]}
          --svg FILE       write overload_amplification's origin load over time to FILE (Docs/Resilience-load.svg)
          --server KIND    nginx (when installed) or the loopback server in a separate process; default auto
          --list           print the scenarios and exit
          SCENARIO...      run only these scenarios (default: all)

        Every figure is the median over the repetitions of a ratio against a baseline measured in the same run,
        baseline and subject interleaved. The exit status is 0 even when a goal is missed, 1 when a scenario
        could not run, 2 for a usage error.
        """

    /// Parses the arguments (without the program name).
    ///
    /// - Throws: ``BenchUsageError`` for an unknown option, a missing value or an unknown scenario.
    static func parse(_ arguments: [String]) throws(BenchUsageError) -> BenchOptions {
        var options = BenchOptions()
        var remaining = arguments[...]
        while let argument = remaining.popFirst() {
            switch argument {
            case "--quick":
                options.quick = true
            case "--json":
                guard let path = remaining.popFirst() else { throw BenchUsageError("--json needs a file") }
                options.jsonPath = path
            case "--svg":
                guard let path = remaining.popFirst() else { throw BenchUsageError("--svg needs a file") }
                options.svgPath = path
            case "--server":
                guard let value = remaining.popFirst(), let choice = ServerChoice(rawValue: value) else {
                    throw BenchUsageError("--server needs one of auto, nginx, loopback")
                }
                options.server = choice
            case "--list":
                options.mode = .list
            case "-h", "--help":
                options.mode = .help
            case "--serve-loopback":
                options.mode = .serveLoopback(gzipBody: nil)
            case "--gzip-body":
                guard case .serveLoopback = options.mode, let path = remaining.popFirst() else {
                    throw BenchUsageError("--gzip-body needs --serve-loopback before it and a file")
                }
                options.mode = .serveLoopback(gzipBody: URL(fileURLWithPath: path))
            case "--redis-worker":
                options.mode = .redisWorker(Array(remaining))
                remaining.removeAll()
            case "--measure-upload":
                guard let url = remaining.popFirst().flatMap(URL.init(string:)), let file = remaining.popFirst() else {
                    throw BenchUsageError("--measure-upload needs a URL and a file")
                }
                options.mode = .measureUpload(url: url, file: URL(fileURLWithPath: file))
            case "--measure-breaker":
                guard let requests = remaining.popFirst().flatMap({ Int($0) }), requests > 0 else {
                    throw BenchUsageError("--measure-breaker needs a positive request count")
                }
                options.mode = .measureBreaker(requests: requests)
            default:
                guard !argument.hasPrefix("-") else { throw BenchUsageError("unknown option \(argument)") }
                guard Scenario.all.contains(where: { $0.name == argument }) else {
                    let names = Scenario.all.map(\.name).joined(separator: ", ")
                    throw BenchUsageError("unknown scenario \(argument) (scenarios: \(names))")
                }
                options.scenarios.append(argument)
            }
        }
        return options
    }
}

/// A command line that cannot be run.
struct BenchUsageError: Error, CustomStringConvertible {
    let description: String

    init(_ description: String) {
        self.description = description
    }
}
