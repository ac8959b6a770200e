import FerryCore
import Foundation
import Synchronization
import Testing

@Suite("withTimeout")
struct TimeoutTests {
    struct Boom: Error {}

    @Test("a deadline moved later while the operation runs holds at its new instant, not its first")
    func movingDeadline() async throws {
        let end = Mutex(ContinuousClock.now + .milliseconds(200))
        // The deadline moves on before it passes, as a request's does once its body is in.
        let result = try await withDeadline({ end.withLock { $0 } }) {
            end.withLock { $0 = .now + .seconds(30) }
            try await Task.sleep(for: .milliseconds(600))
            return 7
        }
        #expect(result == 7)
        let start = ContinuousClock.now
        await #expect(throws: TimeoutError.self) {
            try await withDeadline({ start + .milliseconds(200) }) { try await Task.sleep(for: .seconds(30)) }
        }
        #expect(ContinuousClock.now - start < .seconds(10))
    }

    @Test("one timer serves every call: a short deadline while long ones wait fires at its own time, and many calls that end early fire nothing")
    func sharedTimer() async throws {
        // Long deadlines pending (the shared timer sleeps until theirs), then a short one that must not wait for them.
        let long = Task { try await withTimeout(.seconds(60)) { try await Task.sleep(for: .seconds(2)) } }
        try await Task.sleep(for: .milliseconds(50))
        let start = ContinuousClock.now
        await #expect(throws: TimeoutError.self) {
            try await withTimeout(.milliseconds(150)) { try await Task.sleep(for: .seconds(30)) }
        }
        #expect(ContinuousClock.now - start < .seconds(5), "the short deadline waited for the long one")
        try await long.value
        // A thousand calls that end in time, with deadlines that pass while the test still runs: none fires late.
        try await withThrowingTaskGroup(of: Int.self) { group in
            for index in 0..<1000 { group.addTask { try await withTimeout(.milliseconds(300)) { index } } }
            var sum = 0
            for try await value in group { sum += value }
            #expect(sum == 499_500)
        }
        try await Task.sleep(for: .milliseconds(400))
    }

    @Test("returns the result, or the operation's own error, when it finishes in time")
    func finishesInTime() async throws {
        #expect(try await withTimeout(.seconds(60)) { 42 } == 42)  // long: a loaded machine may start the operation late
        await #expect(throws: Boom.self) { try await withTimeout(.seconds(60)) { throw Boom() } }
    }

    @Test("answers at the deadline even when the operation ignores cancellation")
    func answersAtTheDeadline() async throws {
        // The operation waits on a flag nothing sets until the test ends, deaf to cancellation (as scrypt is):
        // if withTimeout waited for it, the timeout below could not be observed while the flag is still unset.
        let release = ManagedFlag(), finished = ManagedFlag()
        await #expect(throws: TimeoutError.self) {
            try await withTimeout(.milliseconds(100)) {
                await release.waitIgnoringCancellation()
                finished.set()
            }
        }
        #expect(!finished.isSetNow, "the caller got its answer while the operation was still running")
        release.set()
        try await finished.waitUntilSet()
    }

    @Test("throws the caller's error on timeout, and cancels a cooperative operation")
    func customErrorAndCancellation() async throws {
        let sawCancellation = ManagedFlag()
        await #expect(throws: Boom.self) {
            try await withTimeout(.milliseconds(50), throwing: { Boom() }) {
                do {
                    try await Task.sleep(for: .seconds(30))
                } catch {
                    sawCancellation.set()
                    throw error
                }
            }
        }
        try await sawCancellation.waitUntilSet()
    }

    @Test("cancelling the caller cancels the wait")
    func callerCancellation() async throws {
        let task = Task { try await withTimeout(.seconds(30)) { try await Task.sleep(for: .seconds(30)) } }
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
    }
}

/// A flag set from another task, awaited with a deadline.
final class ManagedFlag: @unchecked Sendable {  // guarded by `lock`
    private let lock = NSLock()
    private var isSet = false
    private var waiters: [CheckedContinuation<Void, Never>] = []

    func set() {
        let pending = lock.withLock { () -> [CheckedContinuation<Void, Never>] in
            isSet = true
            defer { waiters = [] }
            return waiters
        }
        for waiter in pending { waiter.resume() }
    }

    var isSetNow: Bool { lock.withLock { isSet } }

    /// Waits until the flag is set, whatever happens to the waiting task.
    func waitIgnoringCancellation() async {
        await withCheckedContinuation { continuation in
            let done = lock.withLock { () -> Bool in
                if isSet { return true }
                waiters.append(continuation)
                return false
            }
            if done { continuation.resume() }
        }
    }

    func waitUntilSet() async throws {
        try await withTimeout(.seconds(60)) {  // a hang detector
            await withCheckedContinuation { continuation in
                let done = self.lock.withLock { () -> Bool in
                    if self.isSet { return true }
                    self.waiters.append(continuation)
                    return false
                }
                if done { continuation.resume() }
            }
        }
    }
}
