/// The outcomes of the recent calls through one closed circuit: a count-based ring of the last `n` calls, or a
/// time-based ring of buckets covering the last `d` of clock time.
///
/// A pure value: no clock, no lock. Time is passed in as the duration since the plugin was made. Recording is O(1):
/// the ring and the buckets are stored properties changed in place (the circuit's table holds each window uniquely),
/// the totals are kept up to date, and a time-based window sweeps its buckets only when the time slice has moved on.
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

    /// Count-based: the last calls, one `Totals` of one call each, in a ring (grown up to `capacity`). Time-based:
    /// one `Totals` per bucket.
    private var slots: [Totals]
    /// Time-based: the time slice (`now / width`) each bucket holds, -1 for none; empty for a count-based window.
    private var slices: [Int64]
    /// Count-based: the slot written next once the ring is full.
    private var next = 0
    /// Count-based: the number of calls the window keeps.
    private let capacity: Int
    /// Time-based: the width of a bucket; `nil` for a count-based window.
    private let width: Duration?
    /// Time-based: the slice of the last sweep, so that calls within one slice skip it.
    private var sweptSlice: Int64 = -1
    /// The totals over the whole window.
    private(set) var totals = Totals()

    /// Creates an empty window.
    ///
    /// - Parameter kind: Its kind and size; sizes below one call or one nanosecond are raised to that.
    init(_ kind: CircuitBreakerPlugin.Window) {
        switch kind {
        case .count(let calls):
            capacity = max(1, calls)
            width = nil
            slots = []
            slices = []
        case .time(let duration):
            capacity = Self.timeBucketCount
            width = max(.nanoseconds(1), duration / Self.timeBucketCount)
            slots = Array(repeating: Totals(), count: Self.timeBucketCount)
            slices = Array(repeating: -1, count: Self.timeBucketCount)
        }
    }

    /// Adds a call's outcome.
    ///
    /// - Parameters:
    ///   - failure: Whether the call counts as a failure.
    ///   - slow: Whether the call was slow.
    ///   - now: The time of the outcome, since the plugin was made.
    mutating func record(failure: Bool, slow: Bool, at now: Duration) {
        if let width {
            let slice = Self.slice(now, width: width)
            expire(slice: slice)
            slots[Self.bucketIndex(slice: slice)].add(failure: failure, slow: slow)
        } else {
            var one = Totals()
            one.add(failure: failure, slow: slow)
            if slots.count < capacity {
                slots.append(one)
            } else {
                totals.subtract(slots[next])
                slots[next] = one
                next = next + 1 == capacity ? 0 : next + 1
            }
        }
        totals.add(failure: failure, slow: slow)
    }

    /// Drops the buckets of a time-based window that have slid out of it by `now`, and claims the current one.
    mutating func expire(at now: Duration) {
        guard let width else { return }
        expire(slice: Self.slice(now, width: width))
    }

    private mutating func expire(slice current: Int64) {
        guard current != sweptSlice else { return }
        sweptSlice = current
        let index = Self.bucketIndex(slice: current)
        for offset in 0..<Self.timeBucketCount where slices[offset] != -1 {
            if current - slices[offset] >= Int64(Self.timeBucketCount) || current < slices[offset] {
                totals.subtract(slots[offset])
                slots[offset] = Totals()
                slices[offset] = -1
            }
        }
        if slices[index] != current {
            totals.subtract(slots[index])
            slots[index] = Totals()
            slices[index] = current
        }
    }

    private static func slice(_ now: Duration, width: Duration) -> Int64 {
        let ratio = max(.zero, now) / width
        return ratio < 9e18 ? Int64(ratio) : Int64.max / 2
    }

    private static func bucketIndex(slice: Int64) -> Int {
        Int(slice % Int64(timeBucketCount))
    }
}
