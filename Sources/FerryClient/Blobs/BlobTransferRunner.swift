import FerryCore
import FerrySecurity
import Foundation
import Logging

/// Runs the transfer queue of a store: uploads before a push, downloads after a pull, each resumed from its confirmed
/// offset in chunks that `chunks` sizes (``SyncEngine/Configuration/blobChunkSize``, growing on a fast network up to
/// ``SyncEngine/Configuration/blobChunkSizeLimit``), each chunk confirmed in the store. An upload holds one chunk in
/// memory; a download two, the next range on its way while one is written.
///
/// A transfer that fails for a reason that may pass is retried after a backoff, by a later sync; one the server
/// refuses for good (too large, bytes that do not match their hash) is marked failed. The network going away
/// ends the sync, as for a push.
struct BlobTransferRunner: Sendable {
    let store: LocalStore
    let remote: any BlobRemote
    var policy = BlobDownloadPolicy()
    var chunks = SyncEngine.Configuration().blobChunks
    var isNetworkExpensive = false
    var backoff = BackoffPolicy(initial: .seconds(5), maximum: .seconds(3600))
    var logger = Logger(label: "ferry.blobs")

    /// Progress of the current transfers, for ``SyncStatus``.
    typealias Progress = @Sendable (BlobProgress) async -> Void

    /// Runs every upload that is due; returns how many finished.
    func uploadAll(_ report: inout SyncReport, progress: Progress) async throws {
        let now = store.now()
        let due = try store.blobTransfers().filter { $0.direction == .upload && !$0.failed && ($0.retryAt ?? now) <= now }
        var status = BlobProgress(pending: due.count)
        for transfer in due {
            try Task.checkCancellation()
            if try await attempt(transfer, { try await upload($0, &status, progress) }) {
                report.blobsUploaded += 1
            }
            status.pending -= 1
        }
        report.blobBytesSent += status.bytes
    }

    /// Runs every download the policy allows now; returns how many finished.
    func downloadAll(_ report: inout SyncReport, progress: Progress) async throws {
        let now = store.now()
        let due = try store.blobTransfers().filter {
            $0.direction == .download && !$0.failed && ($0.retryAt ?? now) <= now
                && policy.downloadsDuringSync(collection: $0.collection, field: $0.field, onExpensiveNetwork: isNetworkExpensive)
        }
        var status = BlobProgress(pending: due.count)
        for transfer in due {
            try Task.checkCancellation()
            if try await attempt(transfer, { try await download($0, &status, progress) }) {
                report.blobsDownloaded += 1
            }
            status.pending -= 1
        }
        report.blobBytesReceived += status.bytes
    }

    /// Downloads one blob now, whatever the policy, and returns its cached file.
    func fetch(_ transfer: BlobTransfer) async throws -> URL {
        var status = BlobProgress(pending: 1)
        try await download(transfer, &status) { _ in }
        guard let url = try store.cachedFile(for: transfer.blob) else {
            throw SyncError(code: .blobUnavailable, message: "The file \(transfer.blob) did not arrive.", isRetryable: true)
        }
        return url
    }

    /// Runs `body`; records a failure that is not the network's, which ends the sync instead.
    private func attempt(_ transfer: BlobTransfer, _ body: (BlobTransfer) async throws -> Void) async throws -> Bool {
        do {
            try await body(transfer)
            try store.finishTransfer(transfer)
            return true
        } catch let error as RemoteError where error.isOffline {
            throw error
        } catch let error as AuthError {
            // The session is over (or cannot be read): no transfer can go on, and none of them failed.
            throw error
        } catch let error as RemoteError {
            // The server refused the request itself (too large, not a member or a viewer any more, malformed): trying
            // again cannot help. Bytes that did not hash to the address may be another member's, who shares the
            // upload: start over from 0 a few times first.
            let status = error.status ?? 0
            let mismatch = error.code == .blobHashMismatch
            if mismatch { try store.confirmTransfer(transfer, at: 0) }
            let permanent = mismatch ? transfer.attempts + 1 >= Self.hashMismatchAttempts
                : (400..<500).contains(status) && ![408, 409, 425, 429].contains(status)
            let delay = backoff.delay(afterAttempt: transfer.attempts + 1, random: Double.random(in: 0..<1))
            try store.failTransfer(
                transfer, error: "\(error.code): \(error.message)", retryAt: permanent ? nil : store.now().addingTimeInterval(delay.timeInterval),
                permanently: permanent
            )
            logger.notice("blob transfer failed", metadata: [
                "ferry.blob.direction": "\(transfer.direction.rawValue)", "ferry.error.code": "\(error.code)", "ferry.blob.permanent": "\(permanent)",
            ])
            return false
        } catch let error as CancellationError {
            throw error
        } catch let error as SyncError where !error.isRetryable {
            try store.failTransfer(transfer, error: "\(error.code): \(error.message)", retryAt: nil, permanently: true)
            return false
        } catch {
            try store.failTransfer(
                transfer, error: "\(error)", retryAt: store.now().addingTimeInterval(backoff.delay(afterAttempt: transfer.attempts + 1, random: 0.5).timeInterval),
                permanently: false
            )
            return false
        }
    }

    private func upload(_ transfer: BlobTransfer, _ status: inout BlobProgress, _ progress: Progress) async throws {
        guard let file = try store.cachedFile(for: transfer.blob) else {
            throw SyncError(code: .blobUnavailable, message: "The attached file \(transfer.blob) is no longer in the blob cache.", isRetryable: false)
        }
        let handle = try FileHandle(forReadingFrom: file)
        defer { try? handle.close() }
        // An empty request first: it says where the server stands (stored already, or an upload to resume).
        var offset = try await send(Data(), at: transfer.confirmed, transfer)
        status.current = transfer.blob
        var pacer = chunks
        while offset < transfer.blob.size {
            try Task.checkCancellation()
            try handle.seek(toOffset: UInt64(offset))
            // No more than the blob has left: a small file's last chunk is not a whole chunk's buffer.
            let chunk = try handle.readChunk(upToCount: Int(min(Int64(pacer.next), transfer.blob.size - offset))) ?? Data()
            guard !chunk.isEmpty else {
                throw SyncError(code: .blobUnavailable, message: "The cached file \(transfer.blob) is shorter than its reference.", isRetryable: false)
            }
            let started = ContinuousClock.now
            let reached = try await send(chunk, at: offset, transfer)
            // A reply that says the server holds more (another device uploads the same file) moved nothing.
            pacer.record(bytes: min(chunk.count, Int(max(0, reached - offset))), took: .now - started)
            status.bytes += max(0, reached - offset)
            offset = reached
            try store.confirmTransfer(transfer, at: offset)
            status.currentDone = offset
            await progress(status)
        }
    }

    /// One upload request; an offset mismatch is answered with the server's offset, from which the caller goes on.
    private func send(_ bytes: Data, at offset: Int64, _ transfer: BlobTransfer) async throws -> Int64 {
        do {
            return try await remote.uploadBlob(space: transfer.space, blob: transfer.blob, offset: offset, bytes: bytes)
        } catch let error as RemoteError where error.code == .uploadOffsetMismatch && error.uploadOffset != nil {
            return error.uploadOffset!
        }
    }

    private func download(_ transfer: BlobTransfer, _ status: inout BlobProgress, _ progress: Progress) async throws {
        if try store.cachedFile(for: transfer.blob) != nil { return }
        let partial = store.partialURL(transfer)
        if !FileManager.default.fileExists(atPath: partial.path()) {
            try OwnerOnlyPath.file(partial.path())
        }
        let handle = try FileHandle(forWritingTo: partial)
        defer { try? handle.close() }
        // What the partial file holds is where the download resumes: it was written before it was confirmed. The hash
        // runs as the bytes arrive (after the held prefix is read once), so the file is not read again at the end.
        var offset = Int64(try handle.seekToEnd())
        var hasher = ContentHasher()
        if offset > 0 {
            let prefix = try FileHandle(forReadingFrom: partial)
            defer { try? prefix.close() }
            while let chunk = try prefix.readChunk(upToCount: LocalStore.fileReadSize) { hasher.update(chunk) }
        }
        status.current = transfer.blob
        var pacer = chunks
        // The next range travels while this one is written, hashed and confirmed: two ranges in memory at most.
        var ahead: RangeRequest?
        defer { ahead?.reply.cancel() }
        while offset < transfer.blob.size {
            try Task.checkCancellation()
            // Asked once the range before it arrived, from where that one ended.
            let range = ahead ?? RangeRequest(transfer, at: offset, length: pacer.next, from: remote)
            ahead = nil
            let (chunk, took) = try await withTaskCancellationHandler { try await range.reply.value } onCancel: { range.reply.cancel() }
            pacer.record(bytes: chunk.count, took: took)
            guard !chunk.isEmpty, chunk.count <= range.length else {
                throw SyncError(code: .blobUnavailable, message: "The server sent \(chunk.count) bytes for a range of \(range.length).", isRetryable: true)
            }
            let reached = offset + Int64(chunk.count)
            if reached < transfer.blob.size { ahead = RangeRequest(transfer, at: reached, length: pacer.next, from: remote) }
            try handle.write(contentsOf: chunk)
            FileDurability.startWriteback(handle.fileDescriptor, offset: offset, length: Int64(chunk.count))  // so the last sync waits for less
            hasher.update(chunk)
            offset = reached
            status.bytes += Int64(chunk.count)
            status.currentDone = offset
            try store.confirmTransfer(transfer, at: offset)
            await progress(status)
        }
        try handle.synchronize()
        guard hasher.finalize() == transfer.blob.sha256 else {
            try? FileManager.default.removeItem(at: partial)
            try store.confirmTransfer(transfer, at: 0)
            throw SyncError(code: .blobUnavailable, message: "The downloaded bytes of \(transfer.blob) do not match its hash; downloading again.", isRetryable: true)
        }
        try store.moveIntoCache(partial, transfer.blob, sealed: try store.encryptedSpaces()[transfer.space] != nil)
    }

    /// How many times an upload whose bytes did not match their hash starts over before it fails for good.
    static let hashMismatchAttempts = 3

    /// One download range, on its way.
    private struct RangeRequest {
        let length: Int
        /// The bytes, and how long the request took (not counting the wait for the loop to take them).
        let reply: Task<(Data, Duration), any Error>

        init(_ transfer: BlobTransfer, at offset: Int64, length: Int, from remote: any BlobRemote) {
            let length = Int(min(Int64(length), transfer.blob.size - offset))
            self.length = length
            reply = Task {
                let started = ContinuousClock.now
                let bytes = try await remote.downloadBlob(space: transfer.space, blob: transfer.blob, offset: offset, length: length)
                return (bytes, .now - started)
            }
        }
    }
}

/// The blob transfers of the sync in flight.
public struct BlobProgress: Sendable, Hashable {
    /// Transfers of the current direction still to run in this sync.
    public var pending: Int
    /// Bytes moved by this sync in the current direction.
    public var bytes: Int64 = 0
    /// The blob moving now.
    public var current: BlobReference?
    /// How much of ``current`` is confirmed.
    public var currentDone: Int64 = 0

    /// Creates a progress value.
    public init(pending: Int = 0) {
        self.pending = pending
    }
}
