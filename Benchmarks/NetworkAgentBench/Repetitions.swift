/// Runs a baseline and a subject in turns, so that drift (other work on the machine, thermal changes) hits both.
enum Repetitions {
    /// Runs `count` repetitions of the pair, alternating which goes first (baseline, subject, subject,
    /// baseline, ...), and returns the medians and per-repetition ratios.
    ///
    /// - Parameters:
    ///   - count: The number of repetitions.
    ///   - baseline: One baseline run; returns its figure.
    ///   - subject: One subject run; returns its figure.
    /// - Returns: The measurement of the paired runs.
    /// - Throws: Whatever a run throws.
    @MainActor
    static func interleaved(
        _ count: Int,
        baseline: @MainActor () async throws -> Double,
        subject: @MainActor () async throws -> Double
    ) async throws -> Measurement {
        var baselines: [Double] = []
        var subjects: [Double] = []
        for repetition in 0..<count {
            if repetition.isMultiple(of: 2) {
                baselines.append(try await baseline())
                subjects.append(try await subject())
            } else {
                subjects.append(try await subject())
                baselines.append(try await baseline())
            }
        }
        return Measurement(baseline: baselines, subject: subjects)
    }
}
