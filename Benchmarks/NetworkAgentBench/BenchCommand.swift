import Foundation
import NetworkAgent
import NetworkAgentToolSupport

/// `networkagent-bench`: measures every performance claim of NetworkAgent as a ratio against a baseline measured in
/// the same run. See Docs/Performance.md.
@main
enum BenchCommand {
    static func main() async {
        let options: BenchOptions
        do {
            options = try BenchOptions.parse(Array(CommandLine.arguments.dropFirst()))
        } catch {
            log("\(error)")
            FileHandle.standardError.write(Data((BenchOptions.usage + "\n").utf8))
            exit(2)
        }
        switch options.mode {
        case .help:
            print(BenchOptions.usage)
        case .list:
            for scenario in Scenario.all {
                let status: String =
                    switch scenario.availability {
                    case .ready: ""
                    case .pending(let needs): " [not yet available: needs \(needs.joined(separator: ", "))]"
                    }
                print("\(scenario.name): \(scenario.summary); goal \(scenario.goal.description)\(status)")
            }
        case .serveLoopback(let gzipBody):
            exit(LoopbackServeMode.run(gzipBody: gzipBody))
        case .measureUpload(let url, let file):
            exit(await UploadChildMode.run(url: url, file: file))
        case .measureBreaker(let requests):
            exit(await ResilienceScenarios.measureBreakerChild(requests: requests))
        case .redisWorker(let arguments):
            // The tests' RedisCacheWorker runs the same steps; here on the default transport, and an answer counts
            // only when it is the 1 KiB document.
            exit(
                await RedisWorker.main(arguments, agent: NetworkAgent()) { data, response in
                    (try? BenchRoutes.checkDocument(data, response)) != nil
                }
            )
        case .bench:
            exit(await BenchRunner.run(options))
        }
    }
}
