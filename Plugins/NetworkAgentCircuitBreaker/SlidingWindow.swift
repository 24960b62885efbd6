/// The outcomes of the recent calls through one closed circuit: a count-based ring of the last `n` calls, or a
/// time-based ring of buckets covering the last `d` of clock time.
///
/// A pure value: no clock, no lock. Time is passed in as the duration since the plugin was made.
struct SlidingWindow: Sendable, Equatable {
    /// How many buckets a time-based window is cut into: it slides in steps of a twentieth of its length.
    static let timeBucketCount = 20

    /// The totals of one bucket, or of the whole window.
    struct Totals: Sendable, Equatable {
        var calls = 0
        var failures = 0
        var slow = 0

        mutating func add(failure: Bool, slow isSlow: Bool) {
            calls += 1
            if failure { failures += 1 }
            if isSlow { slow += 1 }
        }

        mutating func subtract(_ other: Totals) {
            calls -= other.calls
            failures -= other.failures
            slow -= other.slow
        }
    }

    private enum Storage: Sendable, Equatable {
        /// The last calls, one `Totals` of one call each, in a ring; `next` is the slot written next.
        case count(ring: [Totals], next: Int, capacity: Int)
        /// Buckets of `width`, each with the index of the time slice it holds (`slice = now / width`).
        case time(buckets: [Totals], slices: [Int64], width: Duration)
    }

    private var storage: Storage
    /// The totals over the whole window.
    private(set) var totals = Totals()

    /// Creates an empty window.
    ///
    /// - Parameter kind: Its kind and size; sizes below one call or one nanosecond are raised to that.
    init(_ kind: CircuitBreakerPlugin.Window) {
        switch kind {
        case .count(let calls):
            storage = .count(ring: [], next: 0, capacity: max(1, calls))
        case .time(let duration):
            let width = max(.nanoseconds(1), duration / Self.timeBucketCount)
            storage = .time(
                buckets: Array(repeating: Totals(), count: Self.timeBucketCount),
                slices: Array(repeating: -1, count: Self.timeBucketCount),
                width: width
            )
        }
    }

    /// Adds a call's outcome.
    ///
    /// - Parameters:
    ///   - failure: Whether the call counts as a failure.
    ///   - slow: Whether the call was slow.
    ///   - now: The time of the outcome, since the plugin was made.
    mutating func record(failure: Bool, slow: Bool, at now: Duration) {
        var one = Totals()
        one.add(failure: failure, slow: slow)
        switch storage {
        case .count(var ring, var next, let capacity):
            storage = .count(ring: [], next: 0, capacity: capacity)  // keep `ring` uniquely referenced
            if ring.count < capacity {
                ring.append(one)
            } else {
                totals.subtract(ring[next])
                ring[next] = one
            }
            next = (next + 1) % capacity
            storage = .count(ring: ring, next: next, capacity: capacity)
        case .time:
            expire(at: now)
            guard case .time(var buckets, let slices, let width) = storage else { return }
            storage = .time(buckets: [], slices: slices, width: width)
            let index = Self.bucketIndex(slice: Self.slice(now, width: width))
            buckets[index].add(failure: failure, slow: slow)
            storage = .time(buckets: buckets, slices: slices, width: width)
        }
        totals.add(failure: failure, slow: slow)
    }

    /// Drops the buckets of a time-based window that have slid out of it by `now`, and claims the current one.
    mutating func expire(at now: Duration) {
        guard case .time(var buckets, var slices, let width) = storage else { return }
        storage = .time(buckets: [], slices: [], width: width)
        let current = Self.slice(now, width: width)
        let index = Self.bucketIndex(slice: current)
        for offset in 0..<Self.timeBucketCount where slices[offset] != -1 {
            if current - slices[offset] >= Int64(Self.timeBucketCount) || current < slices[offset] {
                totals.subtract(buckets[offset])
                buckets[offset] = Totals()
                slices[offset] = -1
            }
        }
        if slices[index] != current {
            totals.subtract(buckets[index])
            buckets[index] = Totals()
            slices[index] = current
        }
        storage = .time(buckets: buckets, slices: slices, width: width)
    }

    private static func slice(_ now: Duration, width: Duration) -> Int64 {
        let ratio = max(.zero, now) / width
        return ratio < 9e18 ? Int64(ratio) : Int64.max / 2
    }

    private static func bucketIndex(slice: Int64) -> Int {
        Int(slice % Int64(timeBucketCount))
    }
}
