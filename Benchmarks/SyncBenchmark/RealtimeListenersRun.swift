import FerryClient
import FerryCore
import FerryTesting
import Foundation
import NIOPosix
import Synchronization

/// The hidden `--realtime-listeners` mode of `ferry-benchmark --realtime --listeners`: this process holds N bare
/// streams of one session (no engine, no store; stream `i` on the `i mod n`-th of the `--server` list's n
/// instances), so that thousands fit beside the server on one machine and the propagation measured is the server's:
/// from the writer's acknowledged push to the poke's arrival.
///
/// Prints what ``RealtimeDevicesRun`` prints (`connected`, `delivered K`, the arrival times as JSON), each write's
/// arrival being the stream's first poke of a higher sequence number than it had seen; then, with `--restart 1`,
/// `reconnected S` once every stream has been closed by the server's restart and opened again, S seconds after the
/// first close. Each stream is a ``BareStream``, reopened as the engine's stream is.
enum RealtimeListenersRun {
    static let flag = "--realtime-listeners"

    /// What the listeners share: arrival times, how many are open, and when the first one closed.
    final class Listening: Sendable {
        let seen: ArrivalTimes
        let open = Atomic<Int>(0)
        let firstClose = Mutex<ContinuousClock.Instant?>(nil)

        init(ids: Int, listeners: Int) {
            seen = ArrivalTimes(ids: ids, devices: listeners)
        }
    }

    static func main(_ arguments: [String]) async throws {
        var values: [String: String] = [:]
        var iterator = arguments.makeIterator()
        while let name = iterator.next(), let value = iterator.next() { values[name] = value }
        let servers = values["--server"]?.split(separator: ",").compactMap { URL(string: String($0)) } ?? []
        guard let server = servers.first, let anonKey = values["--anon-key"], let email = values["--email"],
              let count = values["--devices"].flatMap(Int.init), let writes = values["--writes"].flatMap(Int.init),
              let password = ProcessInfo.processInfo.environment[DeviceOnlyRun.passwordVariable]
        else { throw BenchmarkError("\(flag) needs --server, --anon-key, --email, --devices, --writes and the password in \(DeviceOnlyRun.passwordVariable)") }
        let waitsForRestart = values["--restart"] == "1"

        let endpoint = ServerEndpoint(baseURL: server, apiKey: anonKey)
        let auth = AuthClient(endpoint: endpoint, store: InMemorySessionStore(), transport: DefaultHTTPTransport(timeout: .seconds(60)), logger: .testing)
        let session = try await auth.signIn(email: email, password: password)
        let targets = try servers.map { try BareStream.Target(server: $0, accessToken: session.accessToken, apiKey: anonKey) }
        let listening = Listening(ids: writes, listeners: count)
        let loops = MultiThreadedEventLoopGroup.singleton
        var streams: [BareStream] = []
        defer { for stream in streams { stream.stop() } }
        for index in 0..<count {
            let stream = BareStream(
                target: targets[index % targets.count], eventLoop: loops.next(), events: events(index: index, writes: writes, listening: listening)
            )
            streams.append(stream)
            stream.start()
            if index % 50 == 49 { try await Task.sleep(for: .milliseconds(20)) }  // a ramp, not a thundering herd
        }
        try await waitUntil(seconds: 300, "every stream open") { listening.open.load(ordering: .relaxed) == count }
        DeviceOnlyRun.emit("connected")
        for index in 0..<writes {
            let giveUp = ContinuousClock.now + .seconds(30)
            while listening.seen.times.withLock({ $0[index].contains(0) }), ContinuousClock.now < giveUp {
                try await Task.sleep(for: .milliseconds(5))
            }
            DeviceOnlyRun.emit("delivered \(index)")
        }
        DeviceOnlyRun.emit(String(decoding: try JSONEncoder().encode(listening.seen.times.withLock { $0 }), as: UTF8.self))
        if waitsForRestart {
            try await waitUntil(seconds: 300, "the server's restart") { listening.firstClose.withLock { $0 } != nil }
            try await waitUntil(seconds: 300, "every stream open again", status: { "open \(listening.open.load(ordering: .relaxed))" }) { listening.open.load(ordering: .relaxed) == count }
            let since = ContinuousClock.now - (listening.firstClose.withLock { $0 } ?? .now)
            DeviceOnlyRun.emit("reconnected \(since.seconds)")
        }
    }

    private static func waitUntil(seconds: Int, _ what: String, status: () -> String = { "" }, _ condition: () -> Bool) async throws {
        let start = ContinuousClock.now, deadline = start + .seconds(seconds)
        var reported = start
        while !condition() {
            guard ContinuousClock.now < deadline else { throw BenchmarkError("no \(what) within \(seconds) s") }
            if ProcessInfo.processInfo.environment["FERRY_BENCHMARK_TRACE"] != nil, ContinuousClock.now - reported > .seconds(1) {
                reported = .now
                FileHandle.standardError.write(Data("waiting for \(what): \((reported - start).seconds) s \(status())\n".utf8))
            }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    /// What stream `index` does with its events: counts itself open or closed, and notes when each write's poke
    /// arrives.
    private static func events(index: Int, writes: Int, listening: Listening) -> BareStream.Events {
        // The next write to arrive, and the highest sequence number poked so far (across reconnections).
        let progress = Mutex<(next: Int, highest: Int64)>((0, -1))
        return BareStream.Events(
            opened: { listening.open.add(1, ordering: .relaxed) },
            closed: {
                listening.open.subtract(1, ordering: .relaxed)
                listening.firstClose.withLock { $0 = $0 ?? .now }
            },
            poked: { seq in
                // The writer writes once every stream has the write before: each commit is one poke here.
                let now = ProcessMetrics.monotonicNanoseconds()
                let write = progress.withLock { progress -> Int? in
                    guard seq > progress.highest, progress.next < writes else { return nil }
                    progress.highest = seq
                    progress.next += 1
                    return progress.next - 1
                }
                if let write { listening.seen.times.withLock { $0[write][index] = now } }
            }
        )
    }
}
