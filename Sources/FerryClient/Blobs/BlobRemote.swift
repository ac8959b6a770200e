import FerryCore
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The blob routes of the server, as the attachment queue needs them; ``SyncClient`` is the real one.
public protocol BlobRemote: Sendable {
    /// Appends `bytes` at `offset` to the upload of `blob` in `space` (`PATCH /sync/v1/spaces/{space}/blobs/{sha256}`)
    /// and returns where the upload stands; `blob.size` once the server stored and checked it. Empty `bytes` ask
    /// where it stands. An ``AuthError`` `upload_offset_mismatch` carries the server's offset in `uploadOffset`.
    func uploadBlob(space: UUID, blob: BlobReference, offset: Int64, bytes: Data) async throws -> Int64
    /// Up to `length` bytes of `blob` from `offset` (`GET` with a `Range`).
    func downloadBlob(space: UUID, blob: BlobReference, offset: Int64, length: Int) async throws -> Data
}

extension SyncClient: BlobRemote {
    public func uploadBlob(space: UUID, blob: BlobReference, offset: Int64, bytes: Data) async throws -> Int64 {
        var request = URLRequest(url: auth.endpoint.url(path: Self.blobPath(space, blob)))
        request.httpMethod = "PATCH"
        request.setValue("application/offset+octet-stream", forHTTPHeaderField: "Content-Type")
        request.setValue("\(offset)", forHTTPHeaderField: "Upload-Offset")
        request.setValue("\(blob.size)", forHTTPHeaderField: "Upload-Length")
        // A probe carries no body at all, rather than an empty one.
        request.httpBody = bytes.isEmpty ? nil : bytes
        let (_, response) = try await auth.authorizedResponse(for: request)
        guard let text = response.value(forHTTPHeaderField: "Upload-Offset"), let reached = Int64(text) else {
            throw AuthError.unreadable("upload offset", status: response.statusCode)
        }
        return reached
    }

    public func downloadBlob(space: UUID, blob: BlobReference, offset: Int64, length: Int) async throws -> Data {
        var request = URLRequest(url: auth.endpoint.url(path: Self.blobPath(space, blob)))
        request.httpMethod = "GET"
        request.setValue("bytes=\(offset)-\(offset + Int64(length) - 1)", forHTTPHeaderField: "Range")
        return try await auth.authorizedData(for: request)
    }

    static func blobPath(_ space: UUID, _ blob: BlobReference) -> String {
        "sync/v1/spaces/\(space.lowercasedText)/blobs/\(blob.sha256)"
    }
}
