import Foundation
import Testing

@testable import NetworkAgentRetry

/// Reading `Retry-After` (RFC 9110 §10.2.3) and `HTTP-date` (§5.6.7): pure parsing, no network.
@Suite struct RetryAfterTests {
    /// `Sun, 06 Nov 1994 08:49:37 GMT`, RFC 9110's example date.
    let example = Date(timeIntervalSince1970: 784_111_777)

    @Test(arguments: [("0", 0), ("1", 1), ("120", 120), (" 7\t", 7), ("007", 7)])
    func delaySecondsAreWholeSeconds(_ value: String, _ seconds: Int64) {
        #expect(RetryAfter.delay(from: value, now: example) == .seconds(seconds))
    }

    @Test func absurdlyLongDelaySecondsAreClampedInsteadOfOverflowing() {
        #expect(RetryAfter.delay(from: "99999999999999999999999", now: example) == RetryAfter.longestDelay)
    }

    @Test(arguments: [
        "Sun, 06 Nov 1994 08:49:37 GMT",  // IMF-fixdate
        "Sunday, 06-Nov-94 08:49:37 GMT",  // obsolete RFC 850
        "Sun Nov  6 08:49:37 1994",  // asctime
    ])
    func theThreeDateFormatsNameTheSameInstant(_ text: String) {
        #expect(HTTPDate.parse(text, now: example) == example)
    }

    @Test func anHTTPDateIsADelayFromNow() {
        #expect(RetryAfter.delay(from: "Sun, 06 Nov 1994 08:50:07 GMT", now: example) == .seconds(30))
        #expect(RetryAfter.delay(from: "Sun, 06 Nov 1994 08:49:38 GMT", now: example - 0.25) == .milliseconds(1250))
    }

    @Test func aDateInThePastMeansNoDelay() {
        #expect(RetryAfter.delay(from: "Sat, 05 Nov 1994 08:49:37 GMT", now: example) == .zero)
    }

    @Test func leapDaysAndCenturiesFollowTheGregorianCalendar() {
        #expect(HTTPDate.parse("Tue, 29 Feb 2000 00:00:00 GMT", now: example)?.timeIntervalSince1970 == 951_782_400)
        #expect(HTTPDate.parse("Thu, 01 Jan 1970 00:00:00 GMT", now: example)?.timeIntervalSince1970 == 0)
        #expect(HTTPDate.parse("Fri, 31 Dec 2100 23:59:59 GMT", now: example)?.timeIntervalSince1970 == 4_133_980_799)
        #expect(HTTPDate.parse("Mon, 29 Feb 2100 00:00:00 GMT", now: example) == nil)
    }

    @Test func aTwoDigitYearMoreThanFiftyYearsAheadIsInThePastCentury() {
        let in2030 = Date(timeIntervalSince1970: 1_893_456_000)  // 2030-01-01
        // From 2030, "80" would be 2080 (exactly 50 years ahead: allowed) and "81" 2081 (too far: 1981).
        let year2080 = HTTPDate.parse("Monday, 01-Jan-80 00:00:00 GMT", now: in2030)
        let year1981 = HTTPDate.parse("Thursday, 01-Jan-81 00:00:00 GMT", now: in2030)
        #expect(year2080?.timeIntervalSince1970 == 3_471_292_800)
        #expect(year1981?.timeIntervalSince1970 == 347_155_200)
    }

    @Test(arguments: [
        "", "  ", "-1", "1.5", "+3", "0x10", "soon",
        "Sun, 06 Nov 1994 08:49:37 UTC",  // not GMT
        "Sun, 06 Nov 1994 08:49:37",  // no zone
        "sun, 06 Nov 1994 08:49:37 GMT",  // day names are case-sensitive
        "Sun, 6 Nov 1994 08:49:37 GMT",  // IMF-fixdate has two-digit days
        "Sun, 06 nov 1994 08:49:37 GMT",
        "Sun, 31 Nov 1994 08:49:37 GMT",
        "Sun, 06 Nov 1994 24:00:00 GMT",
        "Sun, 06 Nov 1994 08:60:00 GMT",
        "Sun, 06 Nov 94 08:49:37 GMT",
        "Sunday, 06-Nov-1994 08:49:37 GMT",
        "Sun Nov  6 08:49:37 94",
        "Sun Nov  6 8:49:37 1994",
    ])
    func malformedValuesAreIgnored(_ value: String) {
        #expect(RetryAfter.delay(from: value, now: example) == nil)
    }
}
