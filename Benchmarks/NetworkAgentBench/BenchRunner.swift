import Foundation
import NetworkAgentToolSupport

#if canImport(Glibc)
import Glibc
#endif

/// Runs the selected scenarios, prints the table and writes the JSON file.
@MainActor
enum BenchRunner {
    /// Runs the benchmark.
    ///
    /// - Returns: The exit status: 0 (goals missed or not), 1 when a scenario could not run or the JSON could not
    ///   be written.
    static func run(_ options: BenchOptions) async -> Int32 {
        let signalSources = installSignalHandlers()
        defer {
            Cleanup.runAll()
            signalSources.forEach { $0.cancel() }
        }
        let context: BenchContext
        do {
            context = try BenchContext(options: options, executable: try Executables.current())
        } catch {
            log("cannot set up: \(error)")
            return 1
        }
        let selected =
            options.scenarios.isEmpty
            ? Scenario.all
            : options.scenarios.compactMap { name in Scenario.all.first { $0.name == name } }
        let loadAtStart = MachineInfo.loadAverage
        let mode = options.quick ? "quick" : "full"
        print("networkagent-bench: \(mode) run, \(options.repetitions) repetitions, baseline and subject interleaved")
        print("machine: \(MachineInfo.summary); load average at start: \(MachineInfo.format(loadAtStart))")
        print("")

        var results: [ScenarioResult] = []
        var failures = 0
        for scenario in selected {
            let result = await run(scenario, context: context)
            if case .ready = scenario.availability, result.value == nil, !result.notRun {
                failures += 1
            }
            results.append(result)
        }

        let loadAtEnd = MachineInfo.loadAverage
        print(ResultTable.render(results))
        print("")
        let server = context.serverLabel.map { $0 == "loopback" ? "loopback server in a separate process" : $0 }
        print("server: \(server ?? "none used"); load average at end: \(MachineInfo.format(loadAtEnd))")

        if let path = options.jsonPath {
            let report = BenchReport(
                scenarios: results,
                mode: mode,
                repetitions: options.repetitions,
                machine: MachineInfo.summary,
                loadAverageStart: loadAtStart,
                loadAverageEnd: loadAtEnd
            )
            do {
                try report.json().write(toFile: path, atomically: true, encoding: .utf8)
                log("wrote \(path)")
            } catch {
                log("cannot write \(path): \(error)")
                return 1
            }
        }
        return failures > 0 ? 1 : 0
    }

    private static func run(_ scenario: Scenario, context: BenchContext) async -> ScenarioResult {
        switch scenario.availability {
        case .pending(let needs):
            let measurement = Measurement.unavailable("not yet available (needs \(needs.joined(separator: ", ")))")
            return ScenarioResult(scenario: scenario, measurement: measurement, server: nil, peakRSSMiB: nil)
        case .ready(let body):
            log("running \(scenario.name)")
            ProcessMemory.resetPeak()
            let clock = ContinuousClock()
            let start = clock.now
            let measurement: Measurement
            do {
                measurement = try await body(context)
            } catch {
                log("\(scenario.name) failed: \(error)")
                measurement = .unavailable("failed: \(error)")
            }
            log(String(format: "%@ took %.1f s", scenario.name, start.duration(to: clock.now).seconds))
            return ScenarioResult(
                scenario: scenario,
                measurement: measurement,
                server: measurement.server ?? (scenario.usesServer ? context.serverLabel : nil),
                peakRSSMiB: measurement.peakMemoryMiB ?? ProcessMemory.peakMiB
            )
        }
    }

    /// Stops the server and deletes temporary files on SIGINT and SIGTERM, then exits.
    private static func installSignalHandlers() -> [any DispatchSourceSignal] {
        [SIGINT, SIGTERM].map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler {
                Cleanup.runAll()
                exit(128 + number)
            }
            source.resume()
            return source
        }
    }
}
