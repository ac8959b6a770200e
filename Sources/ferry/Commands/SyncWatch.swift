import Dispatch
import FerryClient
import FerryCore
import Foundation

/// `ferry sync --watch`: runs the engine with its realtime stream, prints a line per finished sync and per set of
/// changes a poke carried (trigger `realtimeCarried`), and one per change of the stream's state (`{"stream": "connected"}` with --json, on standard error without), and returns when
/// SIGINT or SIGTERM arrives.
struct SyncWatch {
    let engine: SyncEngine
    let json: Bool

    func run() async throws {
        let interrupted = Self.interruption()
        await withTaskGroup(of: Void.self) { group in
            group.addTask { try? await engine.run() }
            group.addTask { await report(engine.statusUpdates()) }
            group.addTask { await engine.trigger(.manual) }
            for await _ in interrupted { break }
            group.cancelAll()
        }
    }

    /// Prints what each status change finished: a sync, a failure, or a stream state.
    private func report(_ updates: AsyncStream<SyncStatus>) async {
        var previous = engine.status
        for await status in updates {
            defer { previous = status }
            if status.realtime != previous.realtime {
                if json {
                    Output.emit(json: true, human: "", ["stream": status.realtime.rawValue])
                } else {
                    FileHandle.standardError.write(Data("stream: \(status.realtime.rawValue)\n".utf8))
                }
            }
            if let error = status.lastError, error != previous.lastError {
                let line = json ? JSONValue.object(["error": .string(error.code.rawValue), "message": .string(error.message)]).jsonText : "Sync failed: \(error.message)"
                FileHandle.standardOutput.write(Data((line + "\n").utf8))
            }
            let report: SyncReport?
            if status.lastSyncedAt != previous.lastSyncedAt {
                report = await engine.lastReport
            } else if status.lastStreamedAt != previous.lastStreamedAt {
                report = await engine.lastStreamedReport
            } else {
                report = nil
            }
            guard let report else { continue }
            Output.emit(json: json, human: "Synced (\(report.triggers.joined(separator: ", "))): pushed \(report.pushed), pulled \(report.pulled), applied \(report.applied).", [
                "at": report.finishedAt.map(Timestamp.format), "triggers": report.triggers, "requests": report.requests,
                "pushed": report.pushed, "pulled": report.pulled, "applied": report.applied, "rejected": report.rejected,
                "pending": status.pendingCount, "stream": status.realtime.rawValue,
            ])
        }
    }

    /// A stream that yields once SIGINT or SIGTERM arrives (their default action, ending the process, is turned off).
    private static func interruption() -> AsyncStream<Void> {
        let (stream, continuation) = AsyncStream.makeStream(of: Void.self)
        let sources = [SIGINT, SIGTERM].map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { continuation.yield() }
            source.resume()
            return source
        }
        let handlers = SignalSources(sources)
        continuation.onTermination = { _ in handlers.cancel() }
        return stream
    }
}

/// Keeps the signal sources alive until the stream ends (Dispatch sources are thread-safe; the type is not marked so).
private final class SignalSources: @unchecked Sendable {
    private let sources: [any DispatchSourceSignal]

    init(_ sources: [any DispatchSourceSignal]) {
        self.sources = sources
    }

    func cancel() {
        sources.forEach { $0.cancel() }
    }
}
