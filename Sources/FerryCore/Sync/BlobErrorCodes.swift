extension ErrorCode {
    // Blobs: `/sync/v1/spaces/{space}/blobs/{sha256}` and the per-mutation check of blob references.

    /// The space has no such blob, or the caller is not a member of the space.
    public static let blobNotFound: ErrorCode = "blob_not_found"
    /// A mutation names a blob the server does not hold in the record's space (per-mutation): upload it first.
    public static let blobMissing: ErrorCode = "blob_missing"
    /// The blob is larger than the server accepts (`--max-blob-bytes`).
    public static let blobTooLarge: ErrorCode = "blob_too_large"
    /// The uploaded bytes do not hash to the address they were sent to; they were discarded.
    public static let blobHashMismatch: ErrorCode = "blob_hash_mismatch"
    /// `Upload-Offset` is not where the upload stands; the body's `offset` (and the `Upload-Offset` header) say where.
    public static let uploadOffsetMismatch: ErrorCode = "upload_offset_mismatch"
    /// Another request is writing this upload right now; retry shortly.
    public static let uploadBusy: ErrorCode = "upload_busy"
}
