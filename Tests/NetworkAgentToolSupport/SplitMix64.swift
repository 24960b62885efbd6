/// A small, fast, seeded generator (SplitMix64): the same sequence for the same seed on every platform, for
/// reproducible sample data in the tests and the benchmarks.
package struct SplitMix64: RandomNumberGenerator, Sendable {
    private var state: UInt64

    /// Creates a generator.
    ///
    /// - Parameter seed: The seed; the same seed gives the same sequence.
    package init(seed: UInt64) {
        state = seed
    }

    /// The next value of the sequence.
    ///
    /// - Returns: 64 pseudo-random bits.
    package mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var mixed = state
        mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
        mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
        return mixed ^ (mixed >> 31)
    }
}
