import Foundation

/// The one conversion between `Duration` and seconds as a floating-point number for the whole package: timeouts
/// for `URLRequest`, backoff arithmetic, `Date` offsets, metrics in seconds and log lines in milliseconds all go
/// through it.
extension Duration {
    /// The duration in seconds, as `URLRequest.timeoutInterval` and `Date.addingTimeInterval(_:)` want it.
    package var timeInterval: TimeInterval {
        let (seconds, attoseconds) = components
        return TimeInterval(seconds) + TimeInterval(attoseconds) / 1e18
    }

    /// The duration rounded to the nearest whole millisecond (halves away from zero), exact for every duration.
    package var roundedMilliseconds: Int64 {
        let (seconds, attoseconds) = components
        let half: Int64 = attoseconds < 0 ? -500_000_000_000_000 : 500_000_000_000_000
        let (product, overflow) = seconds.multipliedReportingOverflow(by: 1000)
        guard !overflow else { return seconds < 0 ? .min : .max }
        let (sum, sumOverflow) = product.addingReportingOverflow((attoseconds + half) / 1_000_000_000_000_000)
        guard !sumOverflow else { return seconds < 0 ? .min : .max }
        return sum
    }

    /// The duration in whole nanoseconds (truncated toward zero), saturated to the range of `Int`.
    package var nanoseconds: Int {
        let (seconds, attoseconds) = components
        let (product, overflow) = Int(seconds).multipliedReportingOverflow(by: 1_000_000_000)
        guard !overflow else { return seconds < 0 ? .min : .max }
        let (sum, sumOverflow) = product.addingReportingOverflow(Int(attoseconds / 1_000_000_000))
        guard !sumOverflow else { return seconds < 0 ? .min : .max }
        return sum
    }

    /// The longest duration ``init(timeInterval:)`` makes: `Int64.max` seconds, about 292 billion years.
    package static let saturatedSeconds: Duration = .seconds(Int64.max)

    /// A duration of `timeInterval` seconds that never traps: NaN is zero, and values beyond ±`Int64.max`
    /// seconds (the infinities included) are ``saturatedSeconds`` with their sign.
    ///
    /// - Parameter timeInterval: Seconds.
    package init(timeInterval: TimeInterval) {
        guard !timeInterval.isNaN else {
            self = .zero
            return
        }
        // 9.2e18 is just below Int64.max seconds and exactly representable as a Double.
        guard abs(timeInterval) < 9.2e18 else {
            self = timeInterval < 0 ? .zero - Self.saturatedSeconds : Self.saturatedSeconds
            return
        }
        self = .seconds(timeInterval)
    }
}

extension Clock where Duration == Swift.Duration {
    /// A function that returns the time this clock has measured since the call of `stopwatch()`.
    ///
    /// It lets code that holds a clock as `any Clock<Duration>` take readings as plain durations, whatever the
    /// clock's `Instant` type is.
    ///
    /// - Returns: The time elapsed since the stopwatch was made, each time it is called.
    package func stopwatch() -> @Sendable () -> Swift.Duration {
        let origin = now
        return { origin.duration(to: now) }
    }
}
