import Foundation

/// What one scenario measured: medians over the repetitions, or why there is no figure.
struct Measurement: Sendable {
    /// The subject's median, in the scenario's unit.
    var value: Double?
    /// The baseline's median, in the scenario's unit.
    var baseline: Double?
    /// The median of the per-repetition ratios subject / baseline (each repetition pairs runs made back to back).
    var ratio: Double?
    /// The per-repetition ratios.
    var ratios: [Double] = []
    /// The per-repetition subject values.
    var values: [Double] = []
    /// Counts a goal may check, one per repetition (e.g. refresh calls).
    var counts: [String: [Int]] = [:]
    /// Other figures a goal may check beside the value, one per repetition (e.g. `gzip_bomb_curl`'s RSS growth).
    var figures: [String: [Double]] = [:]
    /// The server the scenario talked to when it is not the run's (`gzip_bomb_curl` starts its own).
    var server: String?
    /// The scenario did not run because something it needs is missing (said in ``note``): the row has no figures,
    /// but the run does not count it as a failure (like a pending scenario).
    var notRun = false
    /// Whatever the reader must know beside the figures: why one is missing, what a baseline stands for.
    var note: String?
    /// The peak resident memory that belongs to this scenario in MiB, when the scenario measures it itself
    /// (a child process); otherwise the runner reads the bench process's own peak.
    var peakMemoryMiB: Double?
    /// No figures, only a note.
    static func unavailable(_ note: String) -> Measurement {
        Measurement(note: note)
    }

    /// Not run, because `reason` (e.g. no HTTPS server, no Redis): no figures, and not a failure of the run.
    static func notRun(_ reason: String) -> Measurement {
        var measurement = Measurement(note: "not run: \(reason)")
        measurement.notRun = true
        return measurement
    }

    /// The medians and ratios of interleaved runs.
    ///
    /// - Parameters:
    ///   - baseline: The baseline of each repetition.
    ///   - subject: The subject of each repetition, paired with `baseline` by index.
    init(baseline: [Double], subject: [Double]) {
        self.values = subject
        self.value = subject.median
        self.baseline = baseline.median
        self.ratios = zip(subject, baseline).compactMap { pair in pair.1 > 0 ? pair.0 / pair.1 : nil }
        self.ratio = ratios.median
    }

    /// A measurement made of the given parts.
    init(
        value: Double? = nil,
        baseline: Double? = nil,
        ratio: Double? = nil,
        note: String? = nil
    ) {
        self.value = value
        self.baseline = baseline
        self.ratio = ratio
        self.note = note
    }

    /// The min–max over the repetitions of the quantity `goal` bounds.
    func range(for goal: Goal) -> ClosedRange<Double>? {
        let samples = goal.quantity == .ratio ? ratios : values
        guard let low = samples.min(), let high = samples.max() else { return nil }
        return low...high
    }
}

extension Array where Element == Double {
    /// The median (the mean of the middle two for an even count), or `nil` when empty.
    var median: Double? {
        guard !isEmpty else { return nil }
        let sorted = self.sorted()
        let middle = sorted.count / 2
        return sorted.count.isMultiple(of: 2) ? (sorted[middle - 1] + sorted[middle]) / 2 : sorted[middle]
    }
}

extension Measurement {
    /// Which way a CPU ratio is taken.
    enum CPURatio {
        /// Baseline CPU ÷ subject CPU: how many subjects cost one baseline (`chain_overhead_curl`, `curl_overhead`).
        case baselineOverSubject
        /// Subject CPU ÷ baseline CPU: how much dearer the subject is (`concurrency_scale`).
        case subjectOverBaseline
    }

    /// The same interleaved runs judged by client CPU per request (the figures ``ThroughputComparison`` records)
    /// instead of request rate: value and baseline are the median µs of CPU per request, the ratio the median of
    /// the per-repetition ratios taken as `direction` says. The request rates stay in the note. `nil` without
    /// CPU figures.
    func byCPU(_ direction: CPURatio) -> Measurement? {
        guard let subject = figures[ThroughputComparison.cpuFigure],
            let baseline = figures[ThroughputComparison.baselineCPUFigure], !subject.isEmpty
        else { return nil }
        var result = Measurement(value: subject.median, baseline: baseline.median)
        result.values = subject
        result.ratios = zip(subject, baseline).compactMap { subject, baseline in
            guard subject > 0, baseline > 0 else { return nil }
            return direction == .baselineOverSubject ? baseline / subject : subject / baseline
        }
        result.ratio = result.ratios.median
        result.figures = figures
        result.counts = counts
        result.note = [note, rateNote].compactMap { $0 }.joined(separator: "; ")
        return result
    }

    /// `request rates: subject X req/s, baseline Y req/s (ratio Z)`, from the rate figures.
    private var rateNote: String? {
        guard let value, let baseline, let ratio else { return nil }
        return String(
            format: "request rates (medians): subject %.0f req/s, baseline %.0f req/s, ratio %.3f",
            value,
            baseline,
            ratio
        )
    }
}
