import FerryCore
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// `/sync/v1/spaces/{space}/blobs/{sha256}`: a space's files, addressed by the SHA-256 of their bytes.
///
/// - `HEAD`: 200 with `Content-Length` when the blob is stored; otherwise 404 with `Upload-Offset` and `Upload-Length`
///   when an upload is under way (resume from `Upload-Offset`).
/// - `PATCH` with `Upload-Offset` and `Upload-Length` (TUS's headers, `Content-Type: application/offset+octet-stream`):
///   appends the body; 204 with the new `Upload-Offset`. The request that brings the last byte has the hash checked,
///   and its 204 means the blob is stored.
/// - `GET`, with an optional `Range: bytes=N-` or `bytes=N-M`: the bytes, streamed.
struct BlobRoutes {
    let blobs: BlobService

    /// `uploads`: the group of streamed bodies, whose handlers bound their own database steps (``RequestDeadline``).
    func register(on group: DeadlineGroup<AuthenticatedContext>, uploads: RouterGroup<AuthenticatedContext>) {
        let blobs = self.blobs
        let path: RouterPath = "spaces/:space/blobs/:sha256"
        group.head(path) { _, context in
            let key = try Self.key(context)
            switch try await blobs.state(context.caller, key) {
            case .complete(let size):
                return Response(status: .ok, headers: [.contentLength: "\(size)", .contentType: "application/octet-stream", .eTag: "\"\(key.sha256)\""])
            case .uploading(let progress):
                return Response(status: .notFound, headers: [.uploadOffset: "\(progress.received)", .uploadLength: "\(progress.length)", .cacheControl: "no-store"])
            case .absent:
                return Response(status: .notFound, headers: [.uploadOffset: "0", .cacheControl: "no-store"])
            }
        }
        group.get(path) { request, context in
            let key = try Self.key(context)
            let range = try ByteRange(header: request.headers[.range])
            let (size, bytes) = try await blobs.download(context.caller, key, from: range?.start ?? 0)
            return BlobResponse.make(
                size: size, range: range, bytes: bytes, contentType: "application/octet-stream", eTag: key.sha256,
                cacheControl: "private, max-age=31536000, immutable", sent: blobs.metrics.sent,
                pacer: WritePacer(channel: context.channel, stallTimeout: blobs.limits.stalledDownloadTimeout)
            )
        }
        uploads.patch(path) { request, context in
            let key = try Self.key(context)
            guard let offset = request.headers[.uploadOffset].flatMap(Int64.init), offset >= 0 else {
                throw APIError(.badRequest, .badRequest, "Upload-Offset must be the byte the body starts at (HEAD says where the upload stands).")
            }
            guard let length = request.headers[.uploadLength].flatMap(Int64.init), length >= 0, offset <= length else {
                throw APIError(.badRequest, .badRequest, "Upload-Length must be the blob's whole length in bytes, at least Upload-Offset.")
            }
            try request.refuseDeclaredLength(over: length - offset)
            let received = try await blobs.upload(context.caller, key, length: length, offset: offset, body: request.body)
            return Response(status: .noContent, headers: [.uploadOffset: "\(received)"])
        }
    }

    private static func key(_ context: AuthenticatedContext) throws -> BlobKey {
        let space = try context.uuidParameter("space", what: "space")
        guard let hash = context.parameters.get("sha256"), BlobReference.isValidHash(hash) else {
            throw APIError(.badRequest, .badRequest, "A blob's address is the SHA-256 of its bytes: 64 lowercase hexadecimal digits.")
        }
        return BlobKey(space: space, sha256: hash)
    }
}

/// A `Range: bytes=N-` or `bytes=N-M` header (one range; other forms are refused rather than ignored).
struct ByteRange: Sendable, Equatable {
    var start: Int64
    /// The last byte, inclusive.
    var end: Int64?

    init?(header: String?) throws {
        guard let header else { return nil }
        guard header.hasPrefix("bytes="), !header.contains(",") else {
            throw APIError(.rangeNotSatisfiable, .badRequest, "Only one range of the form bytes=N- or bytes=N-M is supported.")
        }
        let parts = header.dropFirst("bytes=".count).split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2, let start = Int64(parts[0]), start >= 0 else {
            throw APIError(.rangeNotSatisfiable, .badRequest, "Only one range of the form bytes=N- or bytes=N-M is supported.")
        }
        self.start = start
        if parts[1].isEmpty {
            end = nil
        } else {
            guard let end = Int64(parts[1]), end >= start else {
                throw APIError(.rangeNotSatisfiable, .badRequest, "A range's end must be at least its start.")
            }
            self.end = end
        }
    }
}

extension HTTPField.Name {
    /// `Upload-Offset`: where an upload stands (TUS's header).
    static let uploadOffset = Self("Upload-Offset")!
    /// `Upload-Length`: an upload's whole length (TUS's header).
    static let uploadLength = Self("Upload-Length")!
}
