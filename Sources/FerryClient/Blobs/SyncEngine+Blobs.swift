import FerryCore
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
    ///   blob; ``AuthError`` when the download fails (`network_unavailable`, `blob_not_found`…).
    public func file(collection: String, id: UUID, field: String) async throws -> URL {
        guard let record = try store.get(collection: collection, id: id) else {
            throw StoreError.notFound(collection, id.lowercasedText)
        }
        guard let value = record.fields[field], !value.isNull, let blob = try? BlobReference(json: value) else {
            throw StoreError(code: .typeMismatch, message: "\(collection).\(field) of record \(id.lowercasedText) holds no file.")
        }
        return try await file(for: blob, in: record.space, collection: collection, field: field)
    }

    /// The file of `blob`, a blob of `space`: the cached copy, or downloaded now.
    public func file(for blob: BlobReference, in space: UUID, collection: String = "", field: String = "") async throws -> URL {
        if let url = try store.cachedFile(for: blob) { return url }
        guard let remote = remote as? any BlobRemote else {
            throw SyncError(code: .blobUnavailable, message: "The file \(blob) is not on this device and this engine has no server to fetch it from.", isRetryable: false)
        }
        let transfer = try store.blobTransfers().first { $0.direction == .download && $0.space == space && $0.blob.sha256 == blob.sha256 }
            ?? BlobTransfer(
                space: space, blob: blob, direction: .download, collection: collection, field: field, confirmed: 0, attempts: 0,
                retryAt: nil, failed: false, lastError: nil
            )
        let url = try await BlobTransferRunner(store: store, remote: remote, logger: logger).fetch(transfer)
        try store.finishTransfer(transfer)
        return url
    }
}
