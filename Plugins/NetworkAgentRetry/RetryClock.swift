public import Foundation
import NetworkAgent

/// Time as ``RetryPlugin`` sees it: a monotonic reading for the time budget, the wall clock for `Retry-After`
/// dates, and a cancellable sleep for the backoff.
///
/// Implementations must be thread-safe: one clock serves every call of a plugin, from many tasks at once. Tests
/// inject a virtual clock whose ``sleep(for:)`` moves ``now`` forward at once, so a backoff schedule runs in no
/// time and its delays can be asserted exactly.
public protocol RetryClock: Sendable {
    /// A monotonic reading since an arbitrary, fixed origin; only differences between readings matter.
    var now: Duration { get }

    /// The current wall-clock date, used to turn a `Retry-After` HTTP-date into a delay.
    var date: Date { get }

    /// Suspends the calling task for `duration`.
    ///
    /// - Parameter duration: How long to wait.
    /// - Throws: An error (any error) as soon as the calling task is cancelled; the plugin then sends nothing
    ///   more and fails the call with ``/NetworkAgent/NetworkAgentError/Code/cancelled``.
    func sleep(for duration: Duration) async throws
}

/// The real clock: `ContinuousClock` for readings and sleeps, `Date()` for the wall clock.
///
/// Its sleep is `Task.sleep(for:)`, which ends at once when the calling task is cancelled.
public struct SystemRetryClock: RetryClock {
    private let origin: ContinuousClock.Instant

    /// Creates a clock whose readings start at zero now.
    public init() {
        origin = ContinuousClock.now
    }

    /// The time elapsed since this clock was created, from `ContinuousClock`.
    public var now: Duration { origin.duration(to: ContinuousClock.now) }

    /// `Date()`.
    public var date: Date { Date() }

    /// Sleeps with `Task.sleep(for:)`.
    ///
    /// - Parameter duration: How long to wait.
    /// - Throws: `CancellationError` as soon as the calling task is cancelled.
    public func sleep(for duration: Duration) async throws {
        try await Task.sleep(for: duration)
    }
}

extension RetryClock where Self == SystemRetryClock {
    /// The real clock, ``SystemRetryClock``.
    package static var system: SystemRetryClock { SystemRetryClock() }
}
