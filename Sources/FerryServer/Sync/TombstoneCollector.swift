import FerryCore
import Foundation
import Logging
import ServiceLifecycle

/// Deletes tombstones older than the retention, hourly. A device whose cursor predates a purge is told to
/// reset that space (`resetRequired`), so it can never miss a delete.
struct TombstoneCollector: Service {
    let storage: any RecordStorage
    let schema: Schema
    let retention: Duration
    let logger: Logger
    var interval: Duration = .seconds(3600)

    func run() async throws {
        // Graceful shutdown cancels the wait; a pass in progress finishes first.
        try? await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                try await Task.sleep(for: interval)
                await collect(now: Date())
            }
        }
    }

    /// One pass; failures are logged and retried at the next interval.
    func collect(now: Date) async {
        let seconds = Double(retention.components.seconds)
        do {
            let purged = try await storage.purgeTombstones(before: now.addingTimeInterval(-seconds), schema: schema)
            if purged > 0 { logger.info("purged tombstones", metadata: ["ferry.sync.purged": "\(purged)"]) }
        } catch {
            logger.warning("tombstone collection failed", metadata: ["ferry.error": "\(error)"])
        }
    }
}
