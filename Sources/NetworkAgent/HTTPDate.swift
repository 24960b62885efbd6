import Foundation

/// Parses the three `HTTP-date` forms a recipient must accept (RFC 9110 §5.6.7): IMF-fixdate
/// (`Sun, 06 Nov 1994 08:49:37 GMT`), the obsolete RFC 850 form (`Sunday, 06-Nov-94 08:49:37 GMT`) and ANSI C's
/// asctime form (`Sun Nov  6 08:49:37 1994`).
///
/// The one parser of the package: retry reads `Retry-After` with it, the disk cache `Date`, `Expires` and
/// `Last-Modified`. It follows the grammar (digit counts, a real day and month name, `GMT`, a real calendar date;
/// the weekday is not checked against the date) and matches names case-insensitively, as RFC 9111 §4.2 asks of
/// caches. The parts are separated by exactly one space, as the grammar says (`Thu, 18  Aug  2050 02:01:18 GMT` is
/// no date); only asctime's one-digit day is padded with a second space. Anything else is `nil`, which each user
/// reads its own safe way (an `Expires` in the past, no `Retry-After`, no heuristic from `Last-Modified`). No
/// `DateFormatter`: this is pure arithmetic on the proleptic Gregorian calendar, independent of locale and time zone.
package enum HTTPDate {
    private static let shortDayNames: Set<String> = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"]
    private static let longDayNames: Set<String> = [
        "monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday",
    ]
    private static let monthNames = [
        "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
    ]

    /// The date an `HTTP-date` stands for, or `nil` when the text is none of its forms or names no real date.
    ///
    /// - Parameters:
    ///   - text: The date; spaces and tabs around it are ignored, those inside must be the grammar's single spaces.
    ///   - now: When the value was received, to place the two-digit year of the RFC 850 form: a year that would be
    ///     more than 50 years after `now` is the most recent past year with the same last two digits.
    /// - Returns: The date, to the second.
    package static func parse(_ text: String, now: Date) -> Date? {
        if let date = imfFixdate(text) { return date }
        let trimmed = trimmingSpacesAndTabs(text)
        // Empty tokens stand for runs of spaces: they fail every part's check below.
        var tokens = trimmed.split(separator: " ", omittingEmptySubsequences: false)
        var asctimeDayDigits = 2...2
        if tokens.count == 6, tokens[2].isEmpty, tokens[3].utf8.count == 1 {
            // asctime's day is `2DIGIT / ( SP DIGIT )`: drop the padding space of a one-digit day.
            tokens.remove(at: 2)
            asctimeDayDigits = 1...1
        }
        let fields: (day: Int, month: Int, year: Int, time: Substring)
        if tokens.count == 6, tokens[0].last == ",", isName(tokens[0].dropLast(), in: shortDayNames),
            isGMT(tokens[5])
        {
            // IMF-fixdate: day-name "," SP 2DIGIT SP month SP 4DIGIT SP time-of-day SP "GMT"
            guard let day = number(tokens[1], digits: 2...2), let month = month(tokens[2]),
                let year = number(tokens[3], digits: 4...4)
            else { return nil }
            fields = (day, month, year, tokens[4])
        } else if tokens.count == 4, tokens[0].last == ",", isName(tokens[0].dropLast(), in: longDayNames),
            isGMT(tokens[3])
        {
            // rfc850-date: day-name-l "," SP 2DIGIT "-" month "-" 2DIGIT SP time-of-day SP "GMT"
            let parts = tokens[1].split(separator: "-", omittingEmptySubsequences: false)
            guard parts.count == 3, let day = number(parts[0], digits: 2...2), let month = month(parts[1]),
                let shortYear = number(parts[2], digits: 2...2)
            else { return nil }
            fields = (day, month, fullYear(shortYear, now: now), tokens[2])
        } else if tokens.count == 5, isName(tokens[0], in: shortDayNames) {
            // asctime-date: day-name SP month SP ( 2DIGIT / ( SP DIGIT ) ) SP time-of-day SP 4DIGIT
            guard let month = month(tokens[1]), let day = number(tokens[2], digits: asctimeDayDigits),
                let year = number(tokens[4], digits: 4...4)
            else { return nil }
            fields = (day, month, year, tokens[3])
        } else {
            return nil
        }
        guard let seconds = secondsOfDay(fields.time),
            (1...daysIn(month: fields.month, year: fields.year)).contains(fields.day)
        else { return nil }
        let days = daysSinceEpoch(year: fields.year, month: fields.month, day: fields.day)
        return Date(timeIntervalSince1970: TimeInterval(days * 86_400 + seconds))
    }

    /// A valid IMF-fixdate of exactly 29 bytes (`Sun, 06 Nov 1994 08:49:37 GMT`, what servers send), read in place
    /// with the general path's checks; `nil` for anything else, which the general path then decides. A disk-cache
    /// hit parses `Date` every time, and splitting it into substrings cost microseconds.
    private static func imfFixdate(_ text: String) -> Date? {
        guard text.utf8.count == 29 else { return nil }
        var text = text
        return text.withUTF8 { bytes -> Date? in
            func lowered(_ index: Int) -> UInt8 { bytes[index] | 0x20 }
            func isLetter(_ index: Int) -> Bool { lowered(index) >= 0x61 && lowered(index) <= 0x7a }
            func digits(_ range: Range<Int>) -> Int? {
                var value = 0
                for index in range {
                    guard bytes[index] >= 0x30 && bytes[index] <= 0x39 else { return nil }
                    value = value * 10 + Int(bytes[index] - 0x30)
                }
                return value
            }
            func name(_ start: Int) -> String? {
                guard isLetter(start), isLetter(start + 1), isLetter(start + 2) else { return nil }
                return String(decoding: [lowered(start), lowered(start + 1), lowered(start + 2)], as: UTF8.self)
            }
            let separators: [(Int, UInt8)] = [
                (3, UInt8(ascii: ",")), (4, 0x20), (7, 0x20), (11, 0x20), (16, 0x20), (19, UInt8(ascii: ":")),
                (22, UInt8(ascii: ":")), (25, 0x20),
            ]
            guard separators.allSatisfy({ bytes[$0.0] == $0.1 }), let dayName = name(0),
                shortDayNames.contains(dayName),
                name(26) == "gmt", let monthName = name(8), let monthIndex = monthNames.firstIndex(of: monthName),
                let day = digits(5..<7), let year = digits(12..<16), let hour = digits(17..<19),
                let minute = digits(20..<22), let second = digits(23..<25), hour < 24, minute < 60, second <= 60,
                (1...daysIn(month: monthIndex + 1, year: year)).contains(day)
            else { return nil }
            let days = daysSinceEpoch(year: year, month: monthIndex + 1, day: day)
            return Date(timeIntervalSince1970: TimeInterval(days * 86_400 + hour * 3600 + minute * 60 + second))
        }
    }

    /// The text without the spaces and tabs around it, trimmed by Unicode scalar as
    /// `trimmingCharacters(in: CharacterSet(charactersIn: " \t"))` does, without its `NSString` round trip (a cost
    /// on every disk-cache hit, which reads `Date`).
    private static func trimmingSpacesAndTabs(_ text: String) -> Substring {
        let scalars = text.unicodeScalars
        let isBlank: (Unicode.Scalar) -> Bool = { $0 == " " || $0 == "\t" }
        guard let first = scalars.firstIndex(where: { !isBlank($0) }),
            let last = scalars.lastIndex(where: { !isBlank($0) })
        else { return "" }
        return Substring(scalars[first...last])
    }

    private static func isName(_ text: Substring, in names: Set<String>) -> Bool {
        names.contains(text.lowercased())
    }

    private static func isGMT(_ text: Substring) -> Bool {
        text.lowercased() == "gmt"
    }

    private static func number(_ text: Substring, digits: ClosedRange<Int>) -> Int? {
        guard digits.contains(text.utf8.count),
            text.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) })
        else { return nil }
        return Int(text)
    }

    private static func month(_ text: Substring) -> Int? {
        monthNames.firstIndex(of: text.lowercased()).map { $0 + 1 }
    }

    /// `hour ":" minute ":" second`, two digits each; a leap second (60) is allowed.
    private static func secondsOfDay(_ text: Substring) -> Int? {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 3, let hour = number(parts[0], digits: 2...2),
            let minute = number(parts[1], digits: 2...2),
            let second = number(parts[2], digits: 2...2), hour < 24, minute < 60, second <= 60
        else { return nil }
        return hour * 3600 + minute * 60 + second
    }

    private static func isLeap(_ year: Int) -> Bool {
        (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
    }

    private static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: isLeap(year) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Days from 1970-01-01 to a date of the proleptic Gregorian calendar, counting eras of 400 years
    /// (146,097 days) from 0000-03-01 so that the leap day ends each year.
    private static func daysSinceEpoch(year: Int, month: Int, day: Int) -> Int {
        let shiftedYear = month <= 2 ? year - 1 : year
        let era = (shiftedYear >= 0 ? shiftedYear : shiftedYear - 399) / 400
        let yearOfEra = shiftedYear - era * 400
        let monthFromMarch = (month + 9) % 12
        let dayOfYear = (153 * monthFromMarch + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The Gregorian year a date falls in (the inverse of ``daysSinceEpoch(year:month:day:)`` for the year).
    private static func year(of date: Date) -> Int {
        let days = Int((date.timeIntervalSince1970 / 86_400).rounded(.down)) + 719_468
        let era = (days >= 0 ? days : days - 146_096) / 146_097
        let dayOfEra = days - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthFromMarch = (5 * dayOfYear + 2) / 153
        return yearOfEra + era * 400 + (monthFromMarch >= 10 ? 1 : 0)
    }

    /// The latest year ending in `shortYear` that is at most 50 years after the year of `now` (RFC 9110 §5.6.7).
    private static func fullYear(_ shortYear: Int, now: Date) -> Int {
        let latest = year(of: now) + 50
        let back = ((latest - shortYear) % 100 + 100) % 100
        return latest - back
    }
}
