import FerryCore
import FerrySecurity
import Foundation

extension SyncEngine {
    /// Tells the engine whether the network is expensive (cellular, a personal hotspot), for
    /// ``BlobDownloadPolicy/Mode/notOnExpensiveNetwork``. Apple apps pass `NWPath.isExpensive` when the path changes.
    public func networkCostChanged(isExpensive: Bool) {
        isNetworkExpensive = isExpensive
    }

    /// The file of the blob in `field` of record `id`: the cached copy, or downloaded now (resuming what an earlier
    /// sync began), whatever the download policy.
    ///
    /// - Throws: ``StoreError`` `record_not_found` when there is no such record, `type_mismatch` when the field holds no
    ///   blob; ``RemoteError`` when the download fails (`network_unavailable`, `blob_not_found`…).
    public func file(collection: String, id: UUID, field: String) async throws -> URL {
        guard let record = try store.fetch(collection: collection, id: id) else {
            throw StoreError.notFound(collection, id.lowercasedText)
        }
        guard let value = record.fields[field], !value.isNull, let blob = try? BlobReference(json: value) else {
            throw StoreError(code: .typeMismatch, message: "\(collection).\(field) of record \(id.lowercasedText) holds no file.")
        }
        return try await file(for: blob, in: record.space, collection: collection, field: field)
    }

    /// Copies the file at `url` into the blob cache and returns the reference to write into a blob field of a record of
    /// `space`. In an end-to-end encrypted space the file is encrypted first, in chunks, under the space's current key
    /// (the reference names the ciphertext, so its hash reveals nothing of the file, and its content type is
    /// `application/octet-stream`); elsewhere this is ``LocalStore/attachFile(at:contentType:)``.
    ///
    /// - Throws: ``SyncError`` `space_locked` when the space is encrypted and this device holds no key for it yet (it is
    ///   pending, or the space was created offline and has not synced); ``StoreError`` when the file cannot be read.
    public func attachFile(at url: URL, contentType: String? = nil, space: UUID) async throws -> BlobReference {
        let encrypted = try store.encryptedSpaces()
        let isPending = try store.pendingSpaces().contains { $0.id == space && $0.encrypted == true }
        guard let version = encrypted[space] ?? (isPending ? 0 : nil) else {
            return try store.attachFile(at: url, contentType: contentType)
        }
        guard let encryption, version > 0,
              let key = try SpaceKeyring(store: store, deviceKeys: encryption.deviceKeys).key(space: space, version: version)
        else {
            throw SyncError(
                code: .spaceLocked,
                message: "Space \(space.lowercasedText) is end-to-end encrypted and this device holds no key for it yet; sync (and have a trusted device approve this one) first.",
                isRetryable: false
            )
        }
        return try store.attachEncryptedFile(at: url, key: key, space: space)
    }

    /// The file of `blob`, a blob of `space`: the cached copy, or downloaded now. In an encrypted space, a decrypted
    /// copy (made once, kept beside the cache and evicted with it).
    public func file(for blob: BlobReference, in space: UUID, collection: String = "", field: String = "") async throws -> URL {
        let stored = try await storedFile(for: blob, in: space, collection: collection, field: field)
        guard try store.encryptedSpaces()[space] != nil else { return stored }
        let plain = store.plainURL(blob.sha256)
        if FileManager.default.fileExists(atPath: plain.path()) { return plain }
        guard let encryption, let key = try SpaceKeyring(store: store, deviceKeys: encryption.deviceKeys)
            .key(space: space, version: try BlobCipher.keyVersion(of: stored))
        else {
            throw SyncError(code: .spaceLocked, message: "This device holds no key to open files of space \(space.lowercasedText).", isRetryable: false)
        }
        try FileManager.default.createDirectory(at: store.plainDirectory, withIntermediateDirectories: true)
        let temporary = store.plainDirectory.appending(path: "\(UUID().uuidString).partial")
        try BlobCipher.decrypt(stored, to: temporary, key: key, space: space)
        try FileManager.default.moveItem(at: temporary, to: plain)
        return plain
    }

    /// The blob's bytes as stored (ciphertext in an encrypted space): cached, or downloaded now.
    private func storedFile(for blob: BlobReference, in space: UUID, collection: String, field: String) async throws -> URL {
        if let url = try store.cachedFile(for: blob) { return url }
        guard let remote = remote as? any BlobRemote else {
            throw SyncError(code: .blobUnavailable, message: "The file \(blob) is not on this device and this engine has no server to fetch it from.", isRetryable: false)
        }
        let transfer = try store.blobTransfers().first { $0.direction == .download && $0.space == space && $0.blob.sha256 == blob.sha256 }
            ?? BlobTransfer(
                space: space, blob: blob, direction: .download, collection: collection, field: field, confirmed: 0, attempts: 0,
                retryAt: nil, failed: false, lastError: nil
            )
        let url = try await BlobTransferRunner(store: store, remote: remote, chunks: configuration.blobChunks, logger: logger).fetch(transfer)
        try store.finishTransfer(transfer)
        return url
    }
}
