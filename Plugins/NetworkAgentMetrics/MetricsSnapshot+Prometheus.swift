import Foundation
import NetworkAgent

extension MetricsSnapshot {
    /// The content type of ``prometheusText()``: `text/plain; version=0.0.4; charset=utf-8`.
    public static let prometheusContentType = "text/plain; version=0.0.4; charset=utf-8"

    /// The snapshot in the Prometheus text exposition format 0.0.4.
    ///
    /// Every family gets `# HELP` and `# TYPE` lines, then one line per series (`name{label="value"} value`);
    /// histograms get cumulative `_bucket` lines with `le` (ending with `+Inf`), `_sum` and `_count`. Label values
    /// escape backslash, double quote and newline; help texts escape backslash and newline.
    ///
    /// - Returns: The exposition text, ending with a newline.
    public func prometheusText() -> String {
        var text = ""
        for family in families {
            text += "# HELP \(family.name) \(Self.escapeHelp(family.help))\n"
            text += "# TYPE \(family.name) \(family.kind.rawValue)\n"
            for sample in family.samples {
                let labels = family.labelNames.map { ($0, sample.labels[$0] ?? "") }
                guard let histogram = sample.histogram else {
                    text += "\(family.name)\(Self.labelSet(labels)) \(Self.format(sample.value))\n"
                    continue
                }
                for bucket in histogram.buckets {
                    let le = Self.labelSet(labels + [("le", Self.format(bucket.upperBound))])
                    text += "\(family.name)_bucket\(le) \(bucket.cumulativeCount)\n"
                }
                text += "\(family.name)_bucket\(Self.labelSet(labels + [("le", "+Inf")])) \(histogram.count)\n"
                text += "\(family.name)_sum\(Self.labelSet(labels)) \(Self.format(histogram.sum))\n"
                text += "\(family.name)_count\(Self.labelSet(labels)) \(histogram.count)\n"
            }
        }
        return text
    }

    private static func labelSet(_ labels: [(String, String)]) -> String {
        guard !labels.isEmpty else { return "" }
        return "{" + labels.map { "\($0.0)=\"\(escapeLabelValue($0.1))\"" }.joined(separator: ",") + "}"
    }

    private static func escapeLabelValue(_ value: String) -> String {
        var escaped = ""
        escaped.reserveCapacity(value.utf8.count)
        for character in value.unicodeScalars {
            switch character {
            case "\\": escaped += "\\\\"
            case "\"": escaped += "\\\""
            case "\n": escaped += "\\n"
            default: escaped.unicodeScalars.append(character)
            }
        }
        return escaped
    }

    private static func escapeHelp(_ help: String) -> String {
        help.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\n", with: "\\n")
    }

    /// A sample value: integers without a fraction, `+Inf`, `-Inf` and `NaN` as Prometheus spells them.
    static func format(_ value: Double) -> String {
        if value.isNaN { return "NaN" }
        if value == .infinity { return "+Inf" }
        if value == -.infinity { return "-Inf" }
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        return "\(value)"
    }
}
