import FerryCore
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The blob routes of the server, as the attachment queue needs them; ``SyncClient`` is the real one.
public protocol BlobRemote: Sendable {
    /// Appends `bytes` at `offset` to the upload of `blob` in `space` (`PATCH /sync/v1/spaces/{space}/blobs/{sha256}`)
    /// and returns where the upload stands; `blob.size` once the server stored and checked it. Empty `bytes` ask
    /// where it stands. A ``RemoteError`` `upload_offset_mismatch` carries the server's offset in `uploadOffset`.
    func uploadBlob(space: UUID, blob: BlobReference, offset: Int64, bytes: Data) async throws -> Int64
    /// Up to `length` bytes of `blob` from `offset` (`GET` with a `Range`).
    func downloadBlob(space: UUID, blob: BlobReference, offset: Int64, length: Int) async throws -> Data
}

extension SyncClient: BlobRemote {
    public func uploadBlob(space: UUID, blob: BlobReference, offset: Int64, bytes: Data) async throws -> Int64 {
        let request = ServerRequest(
            "PATCH", Self.blobPath(space, blob),
            headers: ["Content-Type": "application/offset+octet-stream", "Upload-Offset": "\(offset)", "Upload-Length": "\(blob.size)"],
            // A probe carries no body at all, rather than an empty one.
            body: bytes.isEmpty ? nil : bytes
        )
        let (_, response) = try await auth.send(request)
        guard let text = response.value(forHTTPHeaderField: "Upload-Offset"), let reached = Int64(text) else {
            throw RemoteError.unreadable("upload offset", status: response.statusCode)
        }
        return reached
    }

    public func downloadBlob(space: UUID, blob: BlobReference, offset: Int64, length: Int) async throws -> Data {
        try await auth.send(ServerRequest("GET", Self.blobPath(space, blob), headers: ["Range": "bytes=\(offset)-\(offset + Int64(length) - 1)"])).data
    }

    static func blobPath(_ space: UUID, _ blob: BlobReference) -> String {
        "sync/v1/spaces/\(space.lowercasedText)/blobs/\(blob.sha256)"
    }
}
