import Foundation
import NetworkAgent
import Testing

/// The package's one conversion between `Duration` and seconds.
struct DurationSecondsTests {
    @Test func timeIntervalIsSecondsAndFractions() {
        #expect(Duration.milliseconds(1_500).timeInterval == 1.5)
        #expect(Duration.seconds(-2).timeInterval == -2)
        #expect(Duration.zero.timeInterval == 0)
        #expect(Duration.nanoseconds(1).timeInterval == 1e-9)
    }

    @Test func fromTimeIntervalSaturatesInsteadOfTrapping() {
        #expect(Duration(timeInterval: 1.25) == .milliseconds(1_250))
        #expect(Duration(timeInterval: .nan) == .zero)
        #expect(Duration(timeInterval: .infinity) == Duration.saturatedSeconds)
        #expect(Duration(timeInterval: 1e300) == Duration.saturatedSeconds)
        #expect(Duration(timeInterval: -.infinity) == .zero - Duration.saturatedSeconds)
        #expect(Duration(timeInterval: 60).timeInterval == 60)
    }

    @Test func roundedMillisecondsRoundsHalvesAwayFromZeroAndSaturates() {
        #expect(Duration.microseconds(1_499).roundedMilliseconds == 1)
        #expect(Duration.microseconds(1_500).roundedMilliseconds == 2)
        #expect(Duration.seconds(30).roundedMilliseconds == 30_000)
        #expect(Duration.saturatedSeconds.roundedMilliseconds == .max)
    }

    @Test func nanosecondsTruncateAndSaturate() {
        #expect(Duration.microseconds(2).nanoseconds == 2_000)
        #expect(Duration.seconds(-1).nanoseconds == -1_000_000_000)
        #expect(Duration.saturatedSeconds.nanoseconds == .max)
    }
}
