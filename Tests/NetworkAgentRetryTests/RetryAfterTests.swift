import Foundation
import Testing

@testable import NetworkAgentRetry

/// Reading `Retry-After` (RFC 9110 §10.2.3): pure parsing, no network. The `HTTP-date` forms themselves are the
/// core parser's, tested in `HTTPDateTests`.
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

    @Test func anHTTPDateIsADelayFromNow() {
        #expect(RetryAfter.delay(from: "Sun, 06 Nov 1994 08:50:07 GMT", now: example) == .seconds(30))
        #expect(RetryAfter.delay(from: "Sun, 06 Nov 1994 08:49:38 GMT", now: example - 0.25) == .milliseconds(1250))
    }

    @Test(arguments: [
        "Sun, 06 Nov 1994 08:50:07 GMT",  // IMF-fixdate
        "Sunday, 06-Nov-94 08:50:07 GMT",  // obsolete RFC 850
        "Sun Nov  6 08:50:07 1994",  // asctime
        "sun, 06 nov 1994 08:50:07 gmt",  // names in any case (this parser used to refuse it; the cache's accepted)
    ])
    func everyDateFormIsADelay(_ value: String) {
        #expect(RetryAfter.delay(from: value, now: example) == .seconds(30))
    }

    @Test func aDateInThePastMeansNoDelay() {
        #expect(RetryAfter.delay(from: "Sat, 05 Nov 1994 08:49:37 GMT", now: example) == .zero)
    }

    @Test(arguments: [
        "", "  ", "-1", "1.5", "+3", "0x10", "soon",
        "Sun, 06 Nov 1994 08:49:37 UTC",  // not GMT
        "Sun, 06 Nov 1994 08:49:37",  // no zone
        "Sun, 6 Nov 1994 08:49:37 GMT",  // IMF-fixdate has two-digit days
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
