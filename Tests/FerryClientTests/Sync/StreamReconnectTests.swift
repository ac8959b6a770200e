import FerryClient
import FerryCore
import FerryTesting
import Foundation
import Synchronization
import Testing

/// A stream that ends each open as the test scripts it: refused, or opened (`ready`) and then closed with a code.
/// Past the script it stays open.
final class ScriptedOutcomeRemote: ForwardingSyncRemote, RealtimeRemote {
    let base = FakeSyncRemote(schema: StoreFixture.schema)
    private let outcomes: Mutex<[Result<StreamClosure, RemoteError>]>
    private let openCount = Atomic<Int>(0)

    init(_ outcomes: [Result<StreamClosure, RemoteError>]) {
        self.outcomes = Mutex(outcomes)
    }

    var opens: Int { openCount.load(ordering: .sequentiallyConsistent) }

    func openStream(_ onMessage: @escaping @Sendable (StreamMessage) async -> Void) async throws -> StreamClosure {
        openCount.add(1, ordering: .sequentiallyConsistent)
        guard let outcome = outcomes.withLock({ $0.isEmpty ? nil : $0.removeFirst() }) else {
            await onMessage(.ready(expiresAt: nil))
            try await Task.sleep(for: .seconds(3600))
            return StreamClosure(code: 1000)
        }
        if case .success = outcome { await onMessage(.ready(expiresAt: nil)) }
        return try outcome.get()
    }
}

/// How the engine comes back after its stream ends: a connect storm (every device of a restarted server at once) is
/// spread by the devices themselves.
@Suite("Sync engine: reconnecting the realtime stream")
struct StreamReconnectTests {
    /// Runs an engine over `remote` (jitter drawn as 0.5) until the stream has been opened `opens` times, and answers
    /// the delays it then waits.
    func delays(_ remote: ScriptedOutcomeRemote, untilOpened opens: Int, expecting delay: Duration) async throws -> [Duration] {
        let fixture = try StoreFixture()
        let sleeper = ManualSleeper()
        var configuration = SyncEngine.Configuration()
        configuration.periodicInterval = nil
        let engine = SyncEngine(store: fixture.store, remote: remote, configuration: configuration, sleeper: sleeper, random: { 0.5 })
        let run = Task { try await engine.run() }
        defer { run.cancel() }
        try await eventually("the stream was not opened \(opens) times") { remote.opens >= opens }
        try await eventually("no wait of \(delay): \(sleeper.pendingDelays)") { sleeper.pendingDelays.contains(delay) }
        return sleeper.pendingDelays
    }

    @Test("a refused open waits the server's Retry-After, stretched by up to as much again, never the shorter backoff")
    func honoursRetryAfter() async throws {
        let refusal = RemoteError(code: .tooManyStreams, message: "The server is admitting many streams at once", status: 503, retryAfter: .seconds(3))
        let remote = ScriptedOutcomeRemote([.failure(refusal)])
        // The backoff alone would be 375 ms (500 ms, half of it jitter); Retry-After 3 s × (1 + 0.5).
        _ = try await delays(remote, untilOpened: 1, expecting: .milliseconds(4500))
    }

    @Test("a server that goes away (1001) is reconnected to after up to 2 s; an ordinary close after up to 250 ms", arguments: [
        (1001, Duration.seconds(1)), (1012, .seconds(1)), (1000, .milliseconds(125)),
    ])
    func spreadsRestarts(_ code: Int, _ expected: Duration) async throws {
        let remote = ScriptedOutcomeRemote([.success(StreamClosure(code: code))])
        _ = try await delays(remote, untilOpened: 1, expecting: expected)
    }
}
