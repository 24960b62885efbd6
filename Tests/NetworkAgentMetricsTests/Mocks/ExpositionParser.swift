import Foundation

/// A strict parser of the Prometheus text exposition format 0.0.4, for checking the export line by line.
///
/// Every line must be `# HELP name text`, `# TYPE name type` or a sample `name{label="value",…} value`; names,
/// label names, escapes (`\\`, `\"`, `\n` only) and values are checked, each family's `# TYPE` must come before its
/// samples, and histogram buckets must be cumulative, increasing in `le`, end with `+Inf` and agree with `_count`.
struct Exposition {
    struct Sample: Equatable {
        var name: String
        var labels: [String: String]
        var value: Double
    }

    struct Failure: Error, CustomStringConvertible {
        let line: Int
        let text: String
        let reason: String
        var description: String { "line \(line): \(reason): \(text)" }
    }

    var help: [String: String] = [:]
    var types: [String: String] = [:]
    var samples: [Sample] = []

    /// The samples with this exact name whose labels include `labels`.
    func samples(_ name: String, _ labels: [String: String] = [:]) -> [Sample] {
        samples.filter { sample in
            sample.name == name && labels.allSatisfy { sample.labels[$0.key] == $0.value }
        }
    }

    static func parse(_ text: String) throws -> Exposition {
        guard text.hasSuffix("\n") else { throw Failure(line: 0, text: "", reason: "no final newline") }
        var exposition = Exposition()
        var sampledFamilies: Set<String> = []
        let lines = text.dropLast().split(separator: "\n", omittingEmptySubsequences: false)
        for (offset, line) in lines.enumerated() {
            let number = offset + 1
            func fail(_ reason: String) -> Failure { Failure(line: number, text: String(line), reason: reason) }
            if line.hasPrefix("# HELP ") {
                let rest = line.dropFirst("# HELP ".count)
                let name = String(rest.prefix { $0 != " " })
                guard isMetricName(name) else { throw fail("bad metric name in HELP") }
                guard exposition.help[name] == nil else { throw fail("second HELP") }
                let docstring = rest.dropFirst(name.count).drop { $0 == " " }
                guard let help = unescape(docstring, quotes: false) else { throw fail("bad escape in HELP") }
                exposition.help[name] = help
            } else if line.hasPrefix("# TYPE ") {
                let parts = line.dropFirst("# TYPE ".count).split(separator: " ", omittingEmptySubsequences: false)
                guard parts.count == 2, isMetricName(String(parts[0])) else { throw fail("bad TYPE line") }
                let name = String(parts[0])
                guard ["counter", "gauge", "histogram", "summary", "untyped"].contains(parts[1]) else {
                    throw fail("unknown type")
                }
                guard exposition.types[name] == nil else { throw fail("second TYPE") }
                guard !sampledFamilies.contains(name) else { throw fail("TYPE after samples") }
                exposition.types[name] = String(parts[1])
            } else if line.hasPrefix("#") {
                throw fail("a comment that is neither HELP nor TYPE")
            } else {
                let sample = try parseSample(line, fail: fail)
                guard let family = family(of: sample.name, types: exposition.types) else {
                    throw fail("sample without a TYPE")
                }
                sampledFamilies.insert(family)
                exposition.samples.append(sample)
            }
        }
        try exposition.checkHistograms()
        return exposition
    }

    private static func parseSample(_ line: Substring, fail: (String) -> Failure) throws -> Sample {
        var rest = line[...]
        let name = String(rest.prefix { $0.isLetter || $0.isNumber || $0 == "_" || $0 == ":" })
        guard isMetricName(name) else { throw fail("bad metric name") }
        rest = rest.dropFirst(name.count)
        var labels: [String: String] = [:]
        if rest.first == "{" {
            rest = rest.dropFirst()
            while rest.first != "}" {
                let labelName = String(rest.prefix { $0 != "=" })
                guard isLabelName(labelName) else { throw fail("bad label name '\(labelName)'") }
                guard labels[labelName] == nil else { throw fail("repeated label") }
                rest = rest.dropFirst(labelName.count)
                guard rest.hasPrefix("=\"") else { throw fail("label without =\"") }
                rest = rest.dropFirst(2)
                var raw = ""
                var escaped = false
                while let character = rest.first {
                    rest = rest.dropFirst()
                    if escaped {
                        raw.append(character)
                        escaped = false
                    } else if character == "\\" {
                        raw.append(character)
                        escaped = true
                    } else if character == "\"" {
                        break
                    } else {
                        raw.append(character)
                    }
                }
                guard let value = unescape(raw[...], quotes: true) else { throw fail("bad escape in label value") }
                labels[labelName] = value
                if rest.first == "," {
                    rest = rest.dropFirst()
                } else if rest.first != "}" {
                    throw fail("labels not closed")
                }
            }
            rest = rest.dropFirst()
        }
        guard rest.first == " " else { throw fail("no space before the value") }
        let fields = rest.dropFirst().split(separator: " ", omittingEmptySubsequences: false)
        guard fields.count == 1 || (fields.count == 2 && Int64(fields[1]) != nil) else {
            throw fail("bad value or timestamp")
        }
        guard let value = parseValue(String(fields[0])) else { throw fail("bad value") }
        return Sample(name: name, labels: labels, value: value)
    }

    private static func parseValue(_ text: String) -> Double? {
        switch text {
        case "+Inf": return .infinity
        case "-Inf": return -.infinity
        case "NaN": return .nan
        default:
            guard !text.isEmpty, text.allSatisfy({ "0123456789.eE+-".contains($0) }) else { return nil }
            return Double(text)
        }
    }

    /// Undoes `\\`, `\n` and (in label values) `\"`; any other escape is an error.
    private static func unescape(_ text: Substring, quotes: Bool) -> String? {
        var result = ""
        var iterator = text.makeIterator()
        while let character = iterator.next() {
            guard character == "\\" else {
                if quotes, character == "\n" { return nil }
                result.append(character)
                continue
            }
            switch iterator.next() {
            case "\\": result.append("\\")
            case "n": result.append("\n")
            case "\"" where quotes: result.append("\"")
            default: return nil
            }
        }
        return result
    }

    private static func isMetricName(_ name: String) -> Bool {
        guard let first = name.unicodeScalars.first, isASCIILetter(first) || first == "_" || first == ":" else {
            return false
        }
        return name.unicodeScalars.allSatisfy { isASCIILetter($0) || isDigit($0) || $0 == "_" || $0 == ":" }
    }

    private static func isLabelName(_ name: String) -> Bool {
        guard let first = name.unicodeScalars.first, isASCIILetter(first) || first == "_" else { return false }
        return name.unicodeScalars.allSatisfy { isASCIILetter($0) || isDigit($0) || $0 == "_" }
    }

    private static func isASCIILetter(_ scalar: Unicode.Scalar) -> Bool {
        ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar)
    }

    private static func isDigit(_ scalar: Unicode.Scalar) -> Bool { ("0"..."9").contains(scalar) }

    /// The declared family a sample belongs to: its own name, or a histogram's name for `_bucket`, `_sum`, `_count`.
    private static func family(of name: String, types: [String: String]) -> String? {
        if types[name] != nil, types[name] != "histogram" { return name }
        for suffix in ["_bucket", "_sum", "_count"] where name.hasSuffix(suffix) {
            let base = String(name.dropLast(suffix.count))
            if types[base] == "histogram" { return base }
        }
        return nil
    }

    private func checkHistograms() throws {
        for (name, type) in types where type == "histogram" {
            let buckets = samples.filter { $0.name == name + "_bucket" }
            var series: [[String: String]: [(le: Double, count: Double)]] = [:]
            for bucket in buckets {
                guard let leText = bucket.labels["le"], let le = Self.parseValue(leText) else {
                    throw Failure(line: 0, text: name, reason: "bucket without a valid le")
                }
                var labels = bucket.labels
                labels["le"] = nil
                series[labels, default: []].append((le, bucket.value))
            }
            for (labels, buckets) in series {
                let bounds = buckets.map(\.le)
                let counts = buckets.map(\.count)
                guard bounds == bounds.sorted(), Set(bounds).count == bounds.count, bounds.last == .infinity else {
                    throw Failure(line: 0, text: "\(name) \(labels)", reason: "le not increasing to +Inf")
                }
                guard counts == counts.sorted() else {
                    throw Failure(line: 0, text: "\(name) \(labels)", reason: "buckets not cumulative")
                }
                let count = samples.first { $0.name == name + "_count" && $0.labels == labels }?.value
                guard count == counts.last, samples.contains(where: { $0.name == name + "_sum" && $0.labels == labels })
                else {
                    throw Failure(line: 0, text: "\(name) \(labels)", reason: "_count or _sum missing or wrong")
                }
            }
        }
    }
}
