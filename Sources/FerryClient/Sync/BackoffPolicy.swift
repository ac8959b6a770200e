import FerryCore

/// How long to wait before retrying a failed sync: exponential, capped, with jitter so devices that failed
/// together do not retry together.
public struct BackoffPolicy: Sendable, Hashable {
    /// The delay after the first failure.
    public var initial: Duration = .seconds(1)
    /// The factor between consecutive delays.
    public var multiplier: Double = 2
    /// The longest delay.
    public var maximum: Duration = .seconds(300)
    /// The fraction of each delay that is random (0 = none, 1 = anywhere from zero to the delay).
    public var jitter: Double = 0.5

    /// Creates a policy.
    public init(initial: Duration = .seconds(1), multiplier: Double = 2, maximum: Duration = .seconds(300), jitter: Double = 0.5) {
        self.initial = initial
        self.multiplier = multiplier
        self.maximum = maximum
        self.jitter = jitter
    }

    /// The delay after `attempt` consecutive failures (1 = the first), given `random` in `0..<1`.
    public func delay(afterAttempt attempt: Int, random: Double) -> Duration {
        let base = min(initial.timeInterval * pow(multiplier, Double(max(0, attempt - 1))), maximum.timeInterval)
        let jitter = min(max(jitter, 0), 1)
        let seconds = base * (1 - jitter) + base * jitter * min(max(random, 0), 1)
        return .milliseconds(Int64((seconds * 1000).rounded()))
    }

    private func pow(_ base: Double, _ exponent: Double) -> Double {
        var result = 1.0
        for _ in 0..<Int(min(exponent, 64)) { result *= base }
        return result
    }
}
