import Foundation

/// Parses the HTTP date formats of RFC 9110 §5.6.7, without a `DateFormatter` (slow, and locale-dependent when
/// misconfigured).
///
/// Accepts the preferred IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`) and the two obsolete forms a recipient
/// must still accept: RFC 850 (`Sunday, 06-Nov-94 08:49:37 GMT`) and asctime (`Sun Nov  6 08:49:37 1994`).
enum HTTPDate {
    private static let months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]

    /// The date a header value stands for, or `nil` when it is not a valid HTTP date.
    static func parse(_ text: String) -> Date? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        if let comma = trimmed.firstIndex(of: ",") {
            // IMF-fixdate or RFC 850: the weekday is ignored (a wrong weekday is no reason to refuse a date).
            let rest = trimmed[trimmed.index(after: comma)...].split(separator: " ", omittingEmptySubsequences: true)
            if rest.count == 5, rest[4].uppercased() == "GMT" {
                // IMF-fixdate: day month year time GMT
                guard let day = Int(rest[0]), let month = month(rest[1]), let year = Int(rest[2]), rest[2].count == 4
                else { return nil }
                return make(year: year, month: month, day: day, time: rest[3])
            }
            if rest.count == 3, rest[2].uppercased() == "GMT" {
                // RFC 850: dd-Mon-yy time GMT; a two-digit year more than 50 years ahead is in the past century.
                let parts = rest[0].split(separator: "-")
                guard parts.count == 3, let day = Int(parts[0]), let month = month(parts[1]), let short = Int(parts[2])
                else { return nil }
                var year = short
                if parts[2].count == 2 {
                    let currentYear = Calendar(identifier: .gregorian).component(.year, from: Date())
                    year = 2000 + short
                    if year > currentYear + 50 { year -= 100 }
                }
                return make(year: year, month: month, day: day, time: rest[1])
            }
            return nil
        }
        // asctime: Sun Nov  6 08:49:37 1994
        let parts = trimmed.split(separator: " ", omittingEmptySubsequences: true)
        guard parts.count == 5, let month = month(parts[1]), let day = Int(parts[2]), let year = Int(parts[4]) else {
            return nil
        }
        return make(year: year, month: month, day: day, time: parts[3])
    }

    private static func month(_ text: Substring) -> Int? {
        months.firstIndex(of: text.lowercased()).map { $0 + 1 }
    }

    private static func daysInMonth(_ month: Int, year: Int) -> Int {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    private static func make(year: Int, month: Int, day: Int, time: Substring) -> Date? {
        let clock = time.split(separator: ":")
        guard clock.count == 3, let hour = Int(clock[0]), let minute = Int(clock[1]), let second = Int(clock[2]),
            (0..<24).contains(hour), (0..<60).contains(minute), (0...60).contains(second),
            (1601...9999).contains(year), (1...daysInMonth(month, year: year)).contains(day)
        else { return nil }
        // Days from the civil date (proleptic Gregorian), so no Calendar or time zone is involved.
        let shiftedYear = month <= 2 ? year - 1 : year
        let era = (shiftedYear >= 0 ? shiftedYear : shiftedYear - 399) / 400
        let yearOfEra = shiftedYear - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        let days = era * 146_097 + dayOfEra - 719_468
        let seconds = days * 86_400 + hour * 3_600 + minute * 60 + second
        return Date(timeIntervalSince1970: TimeInterval(seconds))
    }
}
