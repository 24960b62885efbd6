import Foundation

/// Renders results as a plain-text table (also valid Markdown), followed by one note per scenario.
enum ResultTable {
    private static let headers = [
        "scenario", "value", "baseline", "ratio", "min-max", "unit", "goal", "met", "server", "peak MiB",
    ]

    /// The table and its notes.
    static func render(_ results: [ScenarioResult]) -> String {
        let rows = results.map(cells)
        let widths = headers.indices.map { column in
            ([headers[column]] + rows.map { $0[column] }).map(\.count).max() ?? 0
        }
        func line(_ cells: [String]) -> String {
            let padded = zip(cells, widths).map { cell, width in
                cell.padding(toLength: width, withPad: " ", startingAt: 0)
            }
            return "| " + padded.joined(separator: " | ") + " |"
        }
        let separator = "|" + widths.map { String(repeating: "-", count: $0 + 2) }.joined(separator: "|") + "|"
        var lines = [line(headers), separator] + rows.map(line)
        let notes = results.compactMap { result in result.note.map { "- \(result.name): \($0)" } }
        if !notes.isEmpty {
            lines.append("")
            lines += notes
        }
        return lines.joined(separator: "\n")
    }

    private static func cells(_ result: ScenarioResult) -> [String] {
        let range: String =
            if let low = result.min, let high = result.max {
                result.rangeIsRatio
                    ? "\(ratio(low))-\(ratio(high))"
                    : "\(number(low, unit: result.unit))-\(number(high, unit: result.unit))"
            } else {
                "-"
            }
        return [
            result.name,
            result.value.map { number($0, unit: result.unit) } ?? "-",
            result.baseline.map { number($0, unit: result.unit) } ?? "-",
            result.ratio.map(ratio) ?? "-",
            range,
            result.unit,
            result.goal,
            result.met ? "yes" : "no",
            result.server ?? "-",
            result.peakRSSMiB.map { String(format: "%.0f", $0) } ?? "-",
        ]
    }

    private static func number(_ value: Double, unit: String) -> String {
        String(format: unit == "req/s" ? "%.0f" : "%.1f", value)
    }

    private static func ratio(_ value: Double) -> String {
        String(format: value < 0.1 ? "%.4f" : "%.3f", value)
    }
}
