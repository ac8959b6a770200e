import FerryCore
import Foundation
import Logging
import ServiceLifecycle

/// Deletes blobs that no live record or Storage object has named for the retention period, and uploads that stopped
/// long ago.
///
/// A blob is a candidate once it has been stored longer than the retention; it goes if no live record references it
/// then. The retention covers a device that uploaded a file and went offline before pushing the record naming it.
struct BlobCollector: Service {
    let store: any BlobStore
    let records: any RecordStorage
    let objects: any ObjectCatalog
    let schema: Schema
    let limits: BlobLimits
    let logger: Logger

    func run() async throws {
        try? await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                try await Task.sleep(for: limits.collectionInterval)
                await collect(now: Date())
            }
        }
    }

    /// One pass; returns how many blobs went. Failures are logged and retried at the next interval.
    @discardableResult
    func collect(now: Date) async -> Int {
        do {
            let candidates = try await store.blobs(storedBefore: now.addingTimeInterval(-limits.retention.timeInterval))
            var deleted = 0
            if !candidates.isEmpty {
                let referenced = try await records.referencedBlobs(schema: schema).union(try await objects.objectBlobs())
                for key in candidates where !referenced.contains(key) {
                    try await store.delete(key)
                    deleted += 1
                }
            }
            let uploadCutoff = now.addingTimeInterval(-limits.uploadRetention.timeInterval)
            for id in try await objects.deleteResumableUploads(createdBefore: uploadCutoff) { try? await store.discard(id) }
            let uploads = try await store.discardUploads(writtenBefore: uploadCutoff)
            if deleted + uploads > 0 {
                logger.info("collected blobs", metadata: ["ferry.blob.deleted": "\(deleted)", "ferry.blob.uploads_discarded": "\(uploads)"])
            }
            return deleted
        } catch {
            logger.warning("blob collection failed", metadata: ["ferry.error": "\(error)"])
            return 0
        }
    }
}
