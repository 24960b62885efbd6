/// One row of the table and of the JSON file.
struct ScenarioResult: Sendable {
    let name: String
    let value: Double?
    let baseline: Double?
    let ratio: Double?
    let unit: String
    let goal: String
    let met: Bool
    /// The range over the repetitions of the quantity the goal bounds (the ratio, or the value for an absolute
    /// goal).
    let min: Double?
    let max: Double?
    /// Whether ``min`` and ``max`` are ratios (or values). Not in the JSON: the goal says it.
    let rangeIsRatio: Bool
    /// The server the scenario talked to; `nil` when it used none.
    let server: String?
    /// The peak resident memory of the process that did the work, in MiB.
    let peakRSSMiB: Double?
    let note: String?
    /// The scenario did not run for want of something (see ``Measurement/notRun``). Not in the JSON: the note says
    /// it.
    let notRun: Bool

    init(scenario: Scenario, measurement: Measurement, server: String?, peakRSSMiB: Double?) {
        let range = measurement.range(for: scenario.goal)
        self.name = scenario.name
        self.value = measurement.value
        self.baseline = measurement.baseline
        self.ratio = measurement.ratio
        self.unit = scenario.unit
        self.goal = scenario.goal.description
        self.met = scenario.goal.isMet(by: measurement)
        self.min = range?.lowerBound
        self.max = range?.upperBound
        self.rangeIsRatio = scenario.goal.quantity == .ratio
        self.server = server
        self.peakRSSMiB = peakRSSMiB
        self.note = measurement.note
        self.notRun = measurement.notRun
    }

    /// The row as a JSON object, keys in the order of the table.
    var json: JSONValue {
        .object([
            ("name", .string(name)),
            ("value", .number(value)),
            ("baseline", .number(baseline)),
            ("ratio", .number(ratio)),
            ("unit", .string(unit)),
            ("goal", .string(goal)),
            ("met", .bool(met)),
            ("min", .number(min)),
            ("max", .number(max)),
            ("server", .string(server)),
            ("peak_rss_mb", .number(peakRSSMiB)),
            ("note", .string(note)),
        ])
    }
}

/// The JSON file: `{"scenarios": [...]}` plus what the figures depend on.
struct BenchReport: Sendable {
    let scenarios: [ScenarioResult]
    /// `quick` or `full`.
    let mode: String
    let repetitions: Int
    let machine: String
    /// The load averages (1, 5, 15 minutes) when the run started and ended.
    let loadAverageStart: [Double]
    let loadAverageEnd: [Double]

    /// The report as JSON text.
    func json() -> String {
        JSONValue.object([
            ("scenarios", .array(scenarios.map(\.json))),
            ("mode", .string(mode)),
            ("repetitions", .number(Double(repetitions))),
            ("machine", .string(machine)),
            ("load_average_start", .array(loadAverageStart.map { .number($0) })),
            ("load_average_end", .array(loadAverageEnd.map { .number($0) })),
        ]).rendered()
    }
}
