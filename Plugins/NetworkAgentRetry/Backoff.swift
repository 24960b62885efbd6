import Foundation
import NetworkAgent

/// The delays of one call's retries under a policy: exponential growth, capped, with the policy's jitter.
struct Backoff {
    /// The longest delay in seconds the computation keeps, far beyond any real backoff; it keeps the conversion to
    /// nanoseconds inside `Int64`.
    private static let ceilingSeconds = 1e9

    private let base: Double
    private let multiplier: Double
    private let maximum: Double
    private let jitter: RetryPlugin.Jitter
    /// The previous delay in seconds, for decorrelated jitter.
    private var previous: Double?

    init(policy: RetryPlugin.Policy) {
        base = Self.seconds(policy.baseDelay)
        maximum = Self.seconds(policy.maximumDelay)
        multiplier = policy.multiplier.isFinite ? max(1, policy.multiplier) : 1
        jitter = policy.jitter
    }

    /// The delay before retry number `retry` (1 for the first retry).
    ///
    /// - Parameters:
    ///   - retry: The retry's number, from 1.
    ///   - unit: A random value in `0...1` (clamped into it; NaN counts as 0); unused without jitter.
    /// - Returns: The delay, rounded to whole nanoseconds.
    mutating func delay(beforeRetry retry: Int, unit: Double) -> Duration {
        let unit = unit.isNaN ? 0 : min(1, max(0, unit))
        let seconds: Double
        switch jitter {
        case .none:
            seconds = exponential(retry)
        case .full:
            seconds = unit * exponential(retry)
        case .decorrelated:
            let upper = max(base, (previous ?? base) * multiplier)
            seconds = min(maximum, base + unit * (upper - base))
            previous = seconds
        }
        return .nanoseconds(Int64((min(seconds, Self.ceilingSeconds) * 1e9).rounded()))
    }

    /// `min(maximum, base × multiplier^(retry − 1))`.
    private func exponential(_ retry: Int) -> Double {
        guard base > 0 else { return 0 }
        let grown = base * pow(multiplier, Double(max(0, retry - 1)))
        return min(maximum, grown.isFinite ? grown : maximum)
    }

    /// A duration in seconds, negative durations as zero.
    static func seconds(_ duration: Duration) -> Double {
        max(0, duration.timeInterval)
    }
}
