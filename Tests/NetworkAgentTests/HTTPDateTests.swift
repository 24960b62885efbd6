import Foundation
import NetworkAgent
import Testing

/// The package's one `HTTP-date` parser (RFC 9110 §5.6.7), used by retry's `Retry-After` and the disk cache's
/// `Date`, `Expires` and `Last-Modified`: the tests both of its former copies had, and those of the cases where they
/// disagreed.
@Suite struct HTTPDateTests {
    /// `Sun, 06 Nov 1994 08:49:37 GMT`, RFC 9110's example date.
    let example = Date(timeIntervalSince1970: 784_111_777)

    @Test(arguments: [
        "Sun, 06 Nov 1994 08:49:37 GMT",  // IMF-fixdate
        "Sunday, 06-Nov-94 08:49:37 GMT",  // obsolete RFC 850
        "Sun Nov  6 08:49:37 1994",  // asctime
        "Sun Nov 06 08:49:37 1994",  // asctime with a two-digit day
        "  Sun, 06 Nov 1994 08:49:37 GMT ",  // whitespace around the value
        "\tSun, 06 Nov 1994 08:49:37 GMT",
    ])
    func theThreeFormatsNameTheSameInstant(_ text: String) {
        #expect(HTTPDate.parse(text, now: example) == example)
    }

    /// RFC 9111 §4.2 asks caches to match dates case-insensitively; the cache's copy did, retry's did not. One rule
    /// for both users: a `Retry-After` in odd case is as clear as an `Expires`.
    @Test(arguments: [
        "sun, 06 nov 1994 08:49:37 gmt", "SUN, 06 NOV 1994 08:49:37 GMT", "sunday, 06-nov-94 08:49:37 GMT",
        "sun nov  6 08:49:37 1994",
    ])
    func namesAreMatchedCaseInsensitively(_ text: String) {
        #expect(HTTPDate.parse(text, now: example) == example)
    }

    @Test func theWeekdayIsNotCheckedAgainstTheDate() {
        // 06 Nov 1994 was a Sunday; a wrong weekday is no reason to refuse the date.
        #expect(HTTPDate.parse("Mon, 06 Nov 1994 08:49:37 GMT", now: example) == example)
    }

    @Test func leapDaysLeapSecondsAndCenturiesFollowTheGregorianCalendar() {
        #expect(HTTPDate.parse("Tue, 29 Feb 2000 00:00:00 GMT", now: example)?.timeIntervalSince1970 == 951_782_400)
        #expect(HTTPDate.parse("Thu, 01 Jan 1970 00:00:00 GMT", now: example)?.timeIntervalSince1970 == 0)
        #expect(HTTPDate.parse("Fri, 31 Dec 2100 23:59:59 GMT", now: example)?.timeIntervalSince1970 == 4_133_980_799)
        #expect(HTTPDate.parse("Wed, 31 Dec 2008 23:59:60 GMT", now: example)?.timeIntervalSince1970 == 1_230_768_000)
        #expect(HTTPDate.parse("Mon, 29 Feb 2100 00:00:00 GMT", now: example) == nil)
        #expect(HTTPDate.parse("Thu, 31 Feb 1994 08:49:37 GMT", now: example) == nil)
    }

    @Test func aTwoDigitYearMoreThanFiftyYearsAheadIsInThePastCentury() {
        let in2030 = Date(timeIntervalSince1970: 1_893_456_000)  // 2030-01-01
        // From 2030, "80" is 2080 (exactly 50 years ahead: allowed) and "81" 2081 (too far: 1981).
        #expect(HTTPDate.parse("Monday, 01-Jan-80 00:00:00 GMT", now: in2030)?.timeIntervalSince1970 == 3_471_292_800)
        #expect(HTTPDate.parse("Thursday, 01-Jan-81 00:00:00 GMT", now: in2030)?.timeIntervalSince1970 == 347_155_200)
    }

    /// The cache's copy read a two-digit year as 20yy (19yy when more than 50 years past the wall clock), which is
    /// wrong from 2050 on, and ignored the time it was given. The rule is relative to when the value was received.
    @Test func theTwoDigitYearIsPlacedRelativeToTheGivenTime() {
        let in2060 = Date(timeIntervalSince1970: 2_840_140_800)  // 2060-01-01
        // From 2060, "05" is 2105 (45 years ahead), not 2005.
        #expect(HTTPDate.parse("Thursday, 01-Jan-05 00:00:00 GMT", now: in2060)?.timeIntervalSince1970 == 4_260_211_200)
        let in1990 = Date(timeIntervalSince1970: 631_152_000)  // 1990-01-01
        // From 1990, "94" is 1994 and "45" is 2045 (55 years ahead: too far, so 1945).
        #expect(HTTPDate.parse("Sunday, 06-Nov-94 08:49:37 GMT", now: in1990) == example)
        #expect(HTTPDate.parse("Monday, 01-Jan-45 00:00:00 GMT", now: in1990)?.timeIntervalSince1970 == -788_918_400)
    }

    /// The grammar of RFC 9110 §5.6.7, as retry's copy had it; the cache's copy accepted several of these. An
    /// unreadable date is read safely by each user: an `Expires` in the past (RFC 9111 §5.3), no `Retry-After`.
    @Test(arguments: [
        "", "  ", "0", "-1", "1.5", "soon", "tomorrow",
        "Sun, 06 Nov 1994 08:49:37 UTC",  // not GMT (RFC 9111 §4.2: invalid for expiration)
        "Sun, 06 Nov 1994 08:49:37",  // no zone
        "Sun, 6 Nov 1994 08:49:37 GMT",  // IMF-fixdate has two-digit days
        "Sun, 06 Nov 94 08:49:37 GMT",  // and four-digit years
        "Sun, 06 Foo 1994 08:49:37 GMT",
        "Sun, 31 Nov 1994 08:49:37 GMT",
        "Sun, 06 Nov 1994 24:00:00 GMT",
        "Sun, 06 Nov 1994 25:49:37 GMT",
        "Sun, 06 Nov 1994 08:60:00 GMT",
        "Sun, 06 Nov 1994 8:49:37 GMT",  // two-digit hours
        "Funday, 06 Nov 1994 08:49:37 GMT",  // not a day name
        "Sunday, 06 Nov 1994 08:49:37 GMT",  // IMF-fixdate takes the short name
        "Sunday, 06-Nov-1994 08:49:37 GMT",  // RFC 850 has two-digit years
        "Sun, 06-Nov-94 08:49:37 GMT",  // and the long day name
        "Sun Nov  6 08:49:37 94",
        "Sun Nov  6 8:49:37 1994",
    ])
    func malformedDatesAreRefused(_ text: String) {
        #expect(HTTPDate.parse(text, now: example) == nil)
    }
}
