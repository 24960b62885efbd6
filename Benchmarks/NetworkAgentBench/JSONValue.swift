import Foundation

/// A JSON value whose objects keep their keys in the order given (JSONEncoder on Linux does not), so the file reads
/// like the table.
enum JSONValue: Sendable {
    case string(String)
    case number(Double)
    case bool(Bool)
    case null
    case array([JSONValue])
    case object([(key: String, value: JSONValue)])

    /// A number rounded to four decimals, or `null` when missing or not finite (JSON has no NaN).
    static func number(_ number: Double?) -> JSONValue {
        guard let number, number.isFinite else { return .null }
        return .number((number * 10_000).rounded() / 10_000)
    }

    /// A string, or `null` when missing.
    static func string(_ string: String?) -> JSONValue {
        string.map { .string($0) } ?? .null
    }

    /// The value as JSON text, two spaces per level, with a final newline at the top level.
    func rendered() -> String {
        var out = ""
        write(to: &out, indent: 0)
        return out + "\n"
    }

    private func write(to out: inout String, indent: Int) {
        let inner = String(repeating: " ", count: indent + 2)
        let closing = String(repeating: " ", count: indent)
        switch self {
        case .string(let string):
            Self.writeString(string, to: &out)
        case .number(let number):
            out += number == number.rounded() && abs(number) < 1e15 ? String(Int(number)) : String(number)
        case .bool(let bool):
            out += bool ? "true" : "false"
        case .null:
            out += "null"
        case .array(let elements):
            guard !elements.isEmpty else {
                out += "[]"
                return
            }
            out += "[\n"
            for (index, element) in elements.enumerated() {
                out += inner
                element.write(to: &out, indent: indent + 2)
                out += index == elements.count - 1 ? "\n" : ",\n"
            }
            out += closing + "]"
        case .object(let members):
            guard !members.isEmpty else {
                out += "{}"
                return
            }
            out += "{\n"
            for (index, member) in members.enumerated() {
                out += inner
                Self.writeString(member.key, to: &out)
                out += ": "
                member.value.write(to: &out, indent: indent + 2)
                out += index == members.count - 1 ? "\n" : ",\n"
            }
            out += closing + "}"
        }
    }

    /// A JSON string literal (RFC 8259 section 7): quotes, backslashes and control characters escaped.
    private static func writeString(_ string: String, to out: inout String) {
        out += "\""
        for scalar in string.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case let control where control.value < 0x20:
                let hex = String(control.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        out += "\""
    }
}
