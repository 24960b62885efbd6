import Foundation
import NetworkAgentToolSupport

/// Deterministic JSON-like data for the codec scenarios: an array of API-style records (ids, names, e-mails,
/// booleans, decimals, dates, tags, nested objects) drawn from a seeded generator, so every run compresses the
/// same bytes.
enum JSONSample {
    private static let words = [
        "alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet", "kilo", "lima",
        "mike", "november", "oscar", "papa", "quebec", "romeo", "sierra", "tango", "uniform", "victor", "whiskey",
        "xray", "yankee", "zulu", "amber", "basalt", "cobalt", "dune", "ember", "fjord", "granite", "harbor",
        "island", "jasper", "kelp", "lagoon", "meadow", "nectar", "opal", "prairie", "quartz", "ridge", "summit",
        "tundra", "umber", "valley", "willow", "yarrow", "zephyr", "network", "agent", "plugin", "request",
        "response", "cache", "retry", "token", "metric", "stream", "header", "status", "payload",
    ].map { Array($0.utf8) }

    /// About `bytes` bytes (a little more, ending a record) of a JSON array of records.
    static func make(bytes: Int, seed: UInt64 = 0x5EED_2024) -> Data {
        var random = SplitMix64(seed: seed)
        var out: [UInt8] = []
        out.reserveCapacity(bytes + 512)
        out.append(UInt8(ascii: "["))
        var id = 0
        while out.count < bytes {
            if id > 0 { out.append(contentsOf: Array(",\n".utf8)) }
            id += 1
            appendRecord(id: id, to: &out, random: &random)
        }
        out.append(UInt8(ascii: "]"))
        return Data(out)
    }

    private static func appendRecord(id: Int, to out: inout [UInt8], random: inout SplitMix64) {
        func text(_ string: String) { out.append(contentsOf: string.utf8) }
        func word() { out.append(contentsOf: words[Int(random.next() % UInt64(words.count))]) }
        func number(_ upperBound: UInt64) { text(String(random.next() % upperBound)) }

        text(#"{"id":"#)
        text(String(id))
        text(#","name":""#)
        word()
        text(" ")
        word()
        text(#"","email":""#)
        word()
        text(".")
        word()
        number(100)
        text(#"@example.com","active":"#)
        text(random.next().isMultiple(of: 3) ? "false" : "true")
        text(#","score":"#)
        number(1000)
        text(".")
        number(1000)
        text(#","created":"20"#)
        text(String(10 + random.next() % 16))
        text("-0")
        text(String(1 + random.next() % 9))
        text("-1")
        number(10)
        text("T")
        text(String(10 + random.next() % 14))
        text(":")
        text(String(10 + random.next() % 50))
        text(#":00Z","tags":["#)
        for index in 0..<(1 + random.next() % 4) {
            if index > 0 { text(",") }
            text("\"")
            word()
            text("\"")
        }
        text(#"],"address":{"city":""#)
        word()
        text(#"","zip":""#)
        text(String(10_000 + random.next() % 90_000))
        text(#""}}"#)
    }
}
