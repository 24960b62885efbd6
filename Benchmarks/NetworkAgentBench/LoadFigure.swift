import Foundation

/// The origin-load-over-time figure of Docs/Resilience.md, drawn as SVG text by hand: one line per configuration,
/// requests per second on the y axis, seconds on the x axis, the callers' demand as a dashed line.
enum LoadFigure {
    static let colors = ["#d62728", "#ff7f0e", "#1f77b4", "#2ca02c"]

    /// - Parameters:
    ///   - series: A label and requests per bucket for each line.
    ///   - bucket: The width of a bucket.
    ///   - callsPerSecond: The callers' demand, drawn as a reference line.
    /// - Returns: A complete SVG document.
    static func svg(_ series: [(String, [Int])], bucket: Duration, callsPerSecond: Int) -> String {
        let width = 720.0
        let height = 360.0
        let left = 70.0
        let right = 20.0
        let top = 30.0
        let bottom = 50.0
        let perSecond = 1 / (Double(bucket.components.attoseconds) / 1e18 + Double(bucket.components.seconds))
        let rates = series.map { ($0.0, $0.1.map { Double($0) * perSecond }) }
        let buckets = max(1, rates.map(\.1.count).max() ?? 1)
        let peak = max(Double(callsPerSecond), rates.flatMap(\.1).max() ?? 1)
        let yMax = niceCeiling(peak * 1.1)
        let seconds = Double(buckets) / perSecond
        func x(_ index: Double) -> Double { left + (width - left - right) * index / Double(buckets) }
        func y(_ value: Double) -> Double { top + (height - top - bottom) * (1 - value / yMax) }
        var out = """
            <svg xmlns="http://www.w3.org/2000/svg" width="\(Int(width))" height="\(Int(height))" \
            viewBox="0 0 \(Int(width)) \(Int(height))" font-family="sans-serif" font-size="12">
            <rect width="100%" height="100%" fill="white"/>
            <text x="\(Int(width / 2))" y="18" text-anchor="middle" font-size="14">Origin load while it answers 503 \
            to everything (\(callsPerSecond) calls/s demand)</text>

            """
        for step in 0...5 {
            let value = yMax * Double(step) / 5
            out += line(left, y(value), width - right, y(value), stroke: "#ddd")
            out += text(left - 6, y(value) + 4, "\(Int(value))", anchor: "end")
        }
        let secondSteps = max(1, Int(seconds.rounded(.down)))
        for second in 0...secondSteps {
            let px = x(Double(second) * perSecond)
            out += line(px, height - bottom, px, height - bottom + 5, stroke: "#333")
            out += text(px, height - bottom + 18, "\(second)", anchor: "middle")
        }
        out += line(left, top, left, height - bottom, stroke: "#333")
        out += line(left, height - bottom, width - right, height - bottom, stroke: "#333")
        out += text((left + width - right) / 2, height - 12, "seconds", anchor: "middle")
        out +=
            "<text x=\"16\" y=\"\(Int((top + height - bottom) / 2))\" text-anchor=\"middle\" "
            + "transform=\"rotate(-90 16 \(Int((top + height - bottom) / 2)))\">origin requests/s</text>\n"
        out +=
            "<line x1=\"\(f(left))\" y1=\"\(f(y(Double(callsPerSecond))))\" x2=\"\(f(width - right))\" "
            + "y2=\"\(f(y(Double(callsPerSecond))))\" stroke=\"#888\" stroke-dasharray=\"6 4\"/>\n"
        for (index, (label, values)) in rates.enumerated() {
            let color = colors[index % colors.count]
            let points = values.enumerated().map { "\(f(x(Double($0.offset) + 0.5))),\(f(y($0.element)))" }
            out +=
                "<polyline fill=\"none\" stroke=\"\(color)\" stroke-width=\"2\" points=\"\(points.joined(separator: " "))\"/>\n"
            let legendY = top + 14 + Double(index) * 16
            out += line(width - right - 230, legendY - 4, width - right - 210, legendY - 4, stroke: color, width: 2)
            out += text(width - right - 204, legendY, escape(label), anchor: "start")
        }
        let demandY = top + 14 + Double(rates.count) * 16
        out +=
            "<line x1=\"\(f(width - right - 230))\" y1=\"\(f(demandY - 4))\" x2=\"\(f(width - right - 210))\" "
            + "y2=\"\(f(demandY - 4))\" stroke=\"#888\" stroke-dasharray=\"6 4\"/>\n"
        out += text(width - right - 204, demandY, "calls/s demand", anchor: "start")
        return out + "</svg>\n"
    }

    private static func line(
        _ x1: Double,
        _ y1: Double,
        _ x2: Double,
        _ y2: Double,
        stroke: String,
        width: Double = 1
    ) -> String {
        "<line x1=\"\(f(x1))\" y1=\"\(f(y1))\" x2=\"\(f(x2))\" y2=\"\(f(y2))\" stroke=\"\(stroke)\" "
            + "stroke-width=\"\(f(width))\"/>\n"
    }

    private static func text(_ x: Double, _ y: Double, _ content: String, anchor: String) -> String {
        "<text x=\"\(f(x))\" y=\"\(f(y))\" text-anchor=\"\(anchor)\">\(content)</text>\n"
    }

    private static func f(_ value: Double) -> String {
        String(format: "%.1f", value)
    }

    private static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
    }

    /// 1, 2 or 5 times a power of ten, at least `value`.
    private static func niceCeiling(_ value: Double) -> Double {
        guard value > 0 else { return 1 }
        let power = pow(10, floor(log10(value)))
        for factor in [1.0, 2, 5, 10] where factor * power >= value { return factor * power }
        return 10 * power
    }
}
