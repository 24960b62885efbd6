/// What a scenario must reach, checked against its ``Measurement``.
struct Goal: Sendable {
    /// The quantity a goal bounds; its min–max over the repetitions is what the table shows as the range.
    enum Quantity: Sendable {
        /// The subject as a multiple of the baseline.
        case ratio
        /// The subject's value in the scenario's unit.
        case value
    }

    /// How the goal reads in the table and the JSON, e.g. `ratio >= 0.97`.
    let description: String
    /// The quantity whose range is shown.
    let quantity: Quantity
    private let check: @Sendable (Measurement) -> Bool

    /// Whether `measurement` reaches the goal; never for a missing figure.
    func isMet(by measurement: Measurement) -> Bool {
        check(measurement)
    }

    /// No goal: the row reports figures only (`h2_multiplex`); `met` whenever there is a ratio.
    static let report = Goal(description: "report", quantity: .ratio) { $0.ratio != nil }

    /// The median ratio is at least `bound`.
    static func ratioAtLeast(_ bound: Double) -> Goal {
        Goal(description: "ratio >= \(bound.formatted)", quantity: .ratio) { ($0.ratio ?? -.infinity) >= bound }
    }

    /// The median ratio is at most `bound`.
    static func ratioAtMost(_ bound: Double) -> Goal {
        Goal(description: "ratio <= \(bound.formatted)", quantity: .ratio) { ($0.ratio ?? .infinity) <= bound }
    }

    /// The median value is at most `bound`, in the scenario's unit.
    static func valueAtMost(_ bound: Double, unit: String) -> Goal {
        Goal(description: "value <= \(bound.formatted) \(unit)", quantity: .value) {
            ($0.value ?? .infinity) <= bound
        }
    }

    /// A count reported by the scenario (see ``Measurement/counts``) equals `expected` in every repetition.
    static func count(_ name: String, equals expected: Int) -> Goal {
        Goal(description: "\(name) == \(expected)", quantity: .value) { measurement in
            guard let counts = measurement.counts[name], !counts.isEmpty else { return false }
            return counts.allSatisfy { $0 == expected }
        }
    }

    /// Every reading of a figure reported by the scenario (see ``Measurement/figures``) is at most `bound`.
    static func figure(_ name: String, atMost bound: Double, unit: String) -> Goal {
        Goal(description: "\(name) <= \(bound.formatted) \(unit)", quantity: .value) { measurement in
            guard let readings = measurement.figures[name], !readings.isEmpty else { return false }
            return readings.allSatisfy { $0 <= bound }
        }
    }

    /// Both goals; the range shown is the first one's.
    func and(_ other: Goal) -> Goal {
        let first = self
        return Goal(description: "\(first.description); \(other.description)", quantity: first.quantity) {
            first.isMet(by: $0) && other.isMet(by: $0)
        }
    }
}

extension Double {
    /// The shortest spelling of a goal's bound: `20` rather than `20.0`.
    fileprivate var formatted: String {
        rounded() == self && abs(self) < 1e15 ? String(Int(self)) : String(self)
    }
}
