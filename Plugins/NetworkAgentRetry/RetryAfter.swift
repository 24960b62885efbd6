import Foundation
import NetworkAgent

/// Reads a `Retry-After` field value (RFC 9110 §10.2.3): `delay-seconds` or an `HTTP-date`.
enum RetryAfter {
    /// The longest delay a `delay-seconds` value is read as; longer values are clamped to it (about 31,700 years).
    static let longestDelay: Duration = .seconds(1_000_000_000_000)

    /// The delay a `Retry-After` value asks for, or `nil` when it is neither form.
    ///
    /// - Parameters:
    ///   - value: The field value, optional whitespace around it allowed.
    ///   - now: The current wall-clock date, for an HTTP-date; a date in the past means no delay.
    /// - Returns: The delay, zero or more, or `nil` for a malformed value.
    static func delay(from value: String, now: Date) -> Duration? {
        let text = value.trimmingCharacters(in: CharacterSet(charactersIn: " \t"))
        guard !text.isEmpty else { return nil }
        if text.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) {
            // delay-seconds = 1*DIGIT; twelve digits fit an Int64 and are already longer than any sane wait.
            guard text.utf8.count <= 12, let seconds = Int64(text) else { return longestDelay }
            return .seconds(seconds)
        }
        guard let date = HTTPDate.parse(text, now: now) else { return nil }
        let interval = date.timeIntervalSince(now)
        guard interval > 0 else { return .zero }
        let milliseconds = (interval * 1000).rounded(.up)
        guard milliseconds < 1e15 else { return longestDelay }
        return .milliseconds(Int64(milliseconds))
    }
}
