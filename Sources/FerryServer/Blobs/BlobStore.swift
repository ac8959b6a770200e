import FerryCore
import Foundation
import NIOCore

/// A complete blob's address: its space and the SHA-256 of its bytes. Blobs are kept per space, so knowing a hash
/// never opens another space's file, and a space's blobs can be collected on their own.
struct BlobKey: Hashable, Sendable {
    var space: UUID
    var sha256: String
}

/// An upload in progress: its declared length and the bytes received and kept so far.
struct UploadProgress: Sendable, Hashable {
    var length: Int64
    var received: Int64
    var isComplete: Bool { received == length }
}

/// Names an upload in progress; letters, digits and `-` only (it is a file name in ``FileBlobStore``).
struct UploadID: Hashable, Sendable, CustomStringConvertible {
    let text: String

    /// The upload of a blob whose hash the uploader announces (the sync API): one per space and hash, so two devices
    /// sending the same file share it and a restarted device finds its bytes again.
    init(space: UUID, sha256: String) {
        text = "\(space.lowercasedText)-\(sha256)"
    }

    /// A fresh id for an upload whose hash is learned at the end (a TUS upload).
    static func random() -> UploadID { UploadID(text: UUID().lowercasedText) }

    /// An id read from a URL, or `nil` when it is not one this server makes.
    init?(parsing text: String) {
        guard (1...200).contains(text.utf8.count), text.utf8.allSatisfy({ $0 == 45 || (48...57).contains($0) || (97...122).contains($0) })
        else { return nil }
        self.text = text
    }

    private init(text: String) { self.text = text }
    var description: String { text }
}

/// Why a blob store refused an operation; each maps to one HTTP answer in ``BlobService``.
enum BlobStoreError: Error, Sendable, Equatable {
    /// The upload is at `current`, not where the request said to write.
    case offsetMismatch(current: Int64)
    /// The upload was begun with another length.
    case lengthMismatch(declared: Int64)
    /// The body carried more bytes than the upload's length.
    case beyondLength
    /// The upload's bytes do not hash to the announced address; they were discarded.
    case hashMismatch
    /// Another request is writing this upload right now.
    case busy
    /// No such upload (or it is not complete yet, for ``BlobStore/complete(_:space:expected:)``).
    case uploadNotFound
}

/// Where blob bytes live: files (``FileBlobStore``: under the data folder, the default, or with PostgreSQL a folder
/// every instance mounts) or PostgreSQL (``PostgresBlobStore``, so every instance of a scaled-out server sees every
/// blob with nothing else to share).
///
/// Bytes stream both ways: no method holds a whole blob in memory. Uploads are resumable: bytes received are kept,
/// and ``upload(_:)`` says how far an upload got.
protocol BlobStore: Sendable {
    /// The size of a complete blob, or `nil` when the space has no such blob.
    func size(of key: BlobKey) async throws -> Int64?
    /// How far an upload got, or `nil` when none is open under `id`.
    func upload(_ id: UploadID) async throws -> UploadProgress?
    /// How many sync-API uploads (``UploadID/init(space:sha256:)``) of `space` are under way.
    func openUploads(in space: UUID) async throws -> Int
    /// Opens upload `id` with `length` bytes if it is not open, then appends `body` at `offset`, keeping every byte that
    /// arrives (even when the body breaks off), and returns the new offset.
    ///
    /// - Throws: ``BlobStoreError/offsetMismatch(current:)`` when `offset` is not the upload's, ``BlobStoreError/lengthMismatch(declared:)``,
    ///   ``BlobStoreError/beyondLength``, ``BlobStoreError/busy``, or the body's own error after keeping what came.
    func append<Body: AsyncSequence & Sendable>(_ id: UploadID, length: Int64, at offset: Int64, body: Body) async throws -> Int64
    where Body.Element == ByteBuffer
    /// Fixes an upload's length at the bytes it received (an upload whose length was not known when it began, such as
    /// a multipart body, opens with its limit as length); returns that length.
    func seal(_ id: UploadID) async throws -> Int64
    /// Hashes a complete upload and stores it as a blob of `space`, checking the hash against `expected` when given
    /// (a mismatch discards the upload). Returns the blob's key; completing an upload whose blob exists just closes it.
    /// No append to the upload runs meanwhile: the bytes hashed are the bytes stored.
    func complete(_ id: UploadID, space: UUID, expected: String?) async throws -> BlobKey
    /// Drops an upload and its bytes.
    func discard(_ id: UploadID) async throws
    /// A blob's bytes from `offset` on, read as they are sent.
    func read(_ key: BlobKey, from offset: Int64) async throws -> any AsyncSequence<ByteBuffer, any Error> & Sendable
    /// Marks a blob as used now, so collection, which deletes only blobs stored before the retention, keeps it.
    func touch(_ key: BlobKey) async throws
    /// Deletes a blob (nothing when it is gone already).
    func delete(_ key: BlobKey) async throws
    /// Deletes every blob of `spaces` (an erased account's), bytes included.
    func deleteAll(in spaces: Set<UUID>) async throws
    /// The blobs stored before `cutoff`: candidates for collection.
    func blobs(storedBefore cutoff: Date) async throws -> [BlobKey]
    /// Drops uploads last written before `cutoff`; returns how many went.
    func discardUploads(writtenBefore cutoff: Date) async throws -> Int
    /// How many blobs are stored and their bytes, for the console.
    func totals() async throws -> (count: Int, bytes: Int64)
}
