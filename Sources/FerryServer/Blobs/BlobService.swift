import FerryCore
import Foundation
import Logging
import NIOCore
import Prometheus

/// The rules of blobs: who may read and write a space's files, resumable uploads checked against their hash, and the
/// check that every blob a pushed record names is held.
///
/// A caller who is not a member of the space gets `404 blob_not_found`, exactly as for a blob that does not exist, so
/// nobody learns which spaces or files exist. Members of any role read; members and above write.
struct BlobService: Sendable {
    let store: any BlobStore
    let spaces: any SpaceStorage
    let limits: BlobLimits
    let metrics: BlobMetrics
    let logger: Logger

    /// Where a blob stands, for `HEAD`.
    enum State: Sendable, Equatable {
        case complete(size: Int64)
        case uploading(UploadProgress)
        case absent
    }

    func state(_ caller: SyncCaller, _ key: BlobKey) async throws -> State {
        _ = try await role(caller, in: key.space)
        if let size = try await store.size(of: key) { return .complete(size: size) }
        if let progress = try await store.upload(UploadID(space: key.space, sha256: key.sha256)) { return .uploading(progress) }
        return .absent
    }

    /// A blob's size and its bytes from `offset` on.
    func download(_ caller: SyncCaller, _ key: BlobKey, from offset: Int64) async throws -> (size: Int64, bytes: any AsyncSequence<ByteBuffer, any Error> & Sendable) {
        _ = try await role(caller, in: key.space)
        guard let size = try await store.size(of: key) else { throw notFound(key) }
        guard offset < size || offset == 0 else {
            throw ServiceError(.rangeNotSatisfiable, .badRequest, "The blob has \(size) bytes; a range must start within them.", headers: ["Content-Range": "bytes */\(size)"])
        }
        return (size, try await store.read(key, from: offset))
    }

    /// Appends a request's body to the upload of `key` at `offset`; returns the new offset. The last byte completes the
    /// upload: its hash is checked, and the blob exists when this returns `length`.
    func upload<Body: AsyncSequence & Sendable>(
        _ caller: SyncCaller, _ key: BlobKey, length: Int64, offset: Int64, body: Body
    ) async throws -> Int64 where Body.Element == ByteBuffer {
        try await checkWritable(caller, key.space)
        guard length <= limits.maximumBlobBytes else {
            throw ServiceError(.tooLarge, .blobTooLarge, "The blob is \(length) bytes; this server accepts blobs up to \(limits.maximumBlobBytes).")
        }
        if let size = try await store.size(of: key) {
            guard size == length else { throw lengthConflict(declared: size) }
            try await store.touch(key)
            return size
        }
        let id = UploadID(space: key.space, sha256: key.sha256)
        let progress = try await store.upload(id)
        // Every byte arrived but the request that brought the last one ended before the hash was checked: check it now,
        // so no device takes "all bytes received" for "stored".
        if let progress, progress.isComplete, progress.length == length {
            try await complete(id, key, caller)
            return length
        }
        if progress == nil, try await store.openUploads(in: key.space) >= limits.maximumOpenUploadsPerSpace {
            throw ServiceError(.tooLarge, .quotaExceeded,
                "Quota exceeded: space \(key.space.lowercasedText) has \(limits.maximumOpenUploadsPerSpace) uploads under way, the most it may have; finish one first."
            )
        }
        let received: Int64
        do {
            received = try await store.append(id, length: length, at: offset, body: CountedBytes(base: body, counter: metrics.received))
        } catch BlobStoreError.beyondLength {
            // A client that sends more than it announced is confused about the file: start it over.
            try await store.discard(id)
            throw Self.refusal(.beyondLength)
        } catch let error as BlobStoreError {
            // A concurrent request completed the upload first: the blob is stored, which is what this one asked for.
            if error == .uploadNotFound, try await store.size(of: key) == length { return length }
            throw Self.refusal(error)
        }
        guard received == length else { return received }
        try await complete(id, key, caller)
        return received
    }

    /// Stores a complete upload as `key`, or 422 when its bytes do not hash to the address (they are discarded).
    /// Membership is checked again first: an upload under way when its caller left the space stores nothing.
    private func complete(_ id: UploadID, _ key: BlobKey, _ caller: SyncCaller) async throws {
        try await checkWritable(caller, key.space)
        do {
            _ = try await store.complete(id, space: key.space, expected: key.sha256)
        } catch BlobStoreError.hashMismatch {
            throw ServiceError(.unprocessable, .blobHashMismatch,
                "The bytes uploaded do not hash to \(key.sha256); they were discarded, so upload the file again from offset 0."
            )
        } catch let error as BlobStoreError {
            if error == .uploadNotFound, try await store.size(of: key) != nil { return }  // completed by a concurrent request
            throw Self.refusal(error)
        }
        logger.debug("blob stored", metadata: ["ferry.blob.space": "\(key.space.lowercasedText)"])
    }

    /// The blob references among `references` that their space does not hold with that size.
    func missing(_ references: Set<BlobReferenceInSpace>) async throws -> Set<BlobReferenceInSpace> {
        var missing: Set<BlobReferenceInSpace> = []
        for reference in references {
            let key = BlobKey(space: reference.space, sha256: reference.blob.sha256)
            let size = try await store.size(of: key)
            if size != reference.blob.size {
                missing.insert(reference)
            } else {
                // A record is about to name it: collection must not take it between this check and the commit.
                try await store.touch(key)
            }
        }
        return missing
    }

    /// The role of `user` in `space`, or `nil` when they are not a member.
    func role(of user: UUID, in space: UUID) async throws -> SpaceRole? {
        try await spaces.spaces(userID: user).first(where: { $0.id == space })?.role
    }

    /// Refuses a caller who may not upload to `space`: 404 for a non-member, 403 for a viewer.
    private func checkWritable(_ caller: SyncCaller, _ space: UUID) async throws {
        let role = try await role(caller, in: space)
        guard role.canWrite else {
            throw ServiceError(.forbidden, .forbiddenSpace, "Your role in space \(space.lowercasedText) is \(role.rawValue), which cannot upload.")
        }
    }

    /// The caller's role in `space`, or 404 when they are not a member.
    func role(_ caller: SyncCaller, in space: UUID) async throws -> SpaceRole {
        guard let role = try await spaces.spaces(userID: caller.userID).first(where: { $0.id == space })?.role else {
            throw ServiceError(.notFound, .blobNotFound, "No such blob: space \(space.lowercasedText) does not exist or you are not a member.")
        }
        return role
    }

    private func notFound(_ key: BlobKey) -> ServiceError {
        ServiceError(.notFound, .blobNotFound, "Space \(key.space.lowercasedText) has no blob \(key.sha256); upload it with PATCH first.")
    }

    private func lengthConflict(declared: Int64) -> ServiceError {
        ServiceError(.conflict, .uploadOffsetMismatch,
            "This blob is \(declared) bytes long; Upload-Length must say so.", details: ["length": .number(Double(declared))]
        )
    }

    /// The refusal a blob store's error stands for.
    static func refusal(_ error: BlobStoreError) -> ServiceError {
        switch error {
        case .offsetMismatch(let current):
            ServiceError(.conflict, .uploadOffsetMismatch,
                "The upload stands at byte \(current); send the bytes from there (HEAD says where an upload stands).",
                details: ["offset": .number(Double(current))], headers: ["Upload-Offset": "\(current)"]
            )
        case .lengthMismatch(let declared):
            ServiceError(.conflict, .uploadOffsetMismatch,
                "This upload was begun with Upload-Length \(declared); a blob's length cannot change.", details: ["length": .number(Double(declared))]
            )
        case .beyondLength:
            ServiceError(.tooLarge, .payloadTooLarge, "The body carries more bytes than Upload-Length leaves, so the upload was discarded; upload the file again from offset 0.")
        case .hashMismatch:
            ServiceError(.unprocessable, .blobHashMismatch, "The uploaded bytes do not hash to the blob's address; they were discarded.")
        case .busy:
            ServiceError(.conflict, .uploadBusy, "Another request is writing this upload; retry in a moment.", retryAfter: .seconds(1))
        case .uploadNotFound:
            ServiceError(.notFound, .blobNotFound, "No such upload.")
        }
    }
}

/// A blob reference and the space of the record that names it.
struct BlobReferenceInSpace: Hashable, Sendable {
    var space: UUID
    var blob: BlobReference
}

/// `ferry_blob_bytes_received_total` and `ferry_blob_bytes_sent_total`.
struct BlobMetrics: Sendable {
    let received: Counter
    let sent: Counter

    init(registry: PrometheusCollectorRegistry) {
        received = registry.makeCounter(
            descriptor: MetricNameDescriptor("ferry_blob_bytes_received_total", help: "Blob bytes received in uploads and kept.")
        )
        sent = registry.makeCounter(descriptor: MetricNameDescriptor("ferry_blob_bytes_sent_total", help: "Blob bytes sent in downloads."))
    }
}

/// A body whose bytes are counted as they pass.
struct CountedBytes<Base: AsyncSequence & Sendable>: AsyncSequence, Sendable where Base.Element == ByteBuffer {
    let base: Base
    let counter: Counter

    struct AsyncIterator: AsyncIteratorProtocol {
        var base: Base.AsyncIterator
        let counter: Counter

        mutating func next() async throws -> ByteBuffer? {
            let buffer = try await base.next()
            if let buffer { counter.increment(by: Int64(buffer.readableBytes)) }
            return buffer
        }
    }

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(base: base.makeAsyncIterator(), counter: counter) }
}
