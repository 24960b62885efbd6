import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where output goes and how it may look: colours only on a terminal and without `NO_COLOR`.
public struct Terminal: Sendable {
    /// Whether standard output is a terminal.
    public let isInteractive: Bool
    /// Whether to use ANSI colours.
    public let usesColor: Bool

    /// Reads the environment.
    public init(environment: [String: String] = ProcessInfo.processInfo.environment) {
        isInteractive = isatty(STDOUT_FILENO) == 1
        usesColor = isInteractive && environment["NO_COLOR"].map(\.isEmpty) ?? true && environment["TERM"] != "dumb"
    }

    /// A terminal that prints plain text, for tests.
    public static let plain = Terminal(isInteractive: false, usesColor: false)

    private init(isInteractive: Bool, usesColor: Bool) {
        self.isInteractive = isInteractive
        self.usesColor = usesColor
    }

    /// `text` in bold, when colours are on.
    public func bold(_ text: String) -> String { style(text, "1") }
    /// `text` dimmed, when colours are on.
    public func dim(_ text: String) -> String { style(text, "2") }
    /// `text` in a colour (ANSI 256-colour index), when colours are on.
    public func color(_ text: String, _ code: Int) -> String { style(text, "38;5;\(code)") }

    private func style(_ text: String, _ code: String) -> String {
        usesColor ? "\u{1B}[\(code)m\(text)\u{1B}[0m" : text
    }

    /// Writes text to standard output at once (no buffering, so progress bars show as they change).
    public static func output(_ text: String, terminator: String = "\n") {
        FileHandle.standardOutput.write(Data((text + terminator).utf8))
    }

    /// Writes a line to standard error.
    public static func error(_ line: String, terminator: String = "\n") {
        FileHandle.standardError.write(Data((line + terminator).utf8))
    }
}
