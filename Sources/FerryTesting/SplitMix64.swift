/// A small, fast, seedable random generator (SplitMix64), so a failing run replays exactly from its seed.
public struct SplitMix64: RandomNumberGenerator, Sendable {
    private var state: UInt64

    /// Creates a generator whose whole sequence follows from `seed`.
    public init(seed: UInt64) { state = seed }

    /// The next 64 random bits.
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A seed for a run that was not given one: random, to be printed so the run can be replayed.
    public static func freshSeed() -> UInt64 {
        UInt64.random(in: 1...UInt64(Int64.max))
    }
}
