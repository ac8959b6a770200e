import FerryClient
import Testing

@Suite("BackoffPolicy")
struct BackoffPolicyTests {
    @Test("delays double from the initial one, stop at the maximum, and jitter stays within its fraction")
    func delays() {
        let policy = BackoffPolicy(initial: .seconds(1), multiplier: 2, maximum: .seconds(30), jitter: 0.5)
        #expect(policy.delay(afterAttempt: 1, random: 1) == .seconds(1))
        #expect(policy.delay(afterAttempt: 2, random: 1) == .seconds(2))
        #expect(policy.delay(afterAttempt: 3, random: 1) == .seconds(4))
        #expect(policy.delay(afterAttempt: 10, random: 1) == .seconds(30))
        #expect(policy.delay(afterAttempt: 1, random: 0) == .milliseconds(500))
        #expect(policy.delay(afterAttempt: 2, random: 0.5) == .milliseconds(1500))
        let none = BackoffPolicy(initial: .seconds(1), jitter: 0)
        #expect(none.delay(afterAttempt: 1, random: 0.9) == .seconds(1))
    }
}
