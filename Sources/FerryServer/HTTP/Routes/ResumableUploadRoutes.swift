import FerryCore
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// `/storage/v1/upload/resumable`: TUS 1.0.0 (core protocol, creation and termination), as Supabase Storage serves it
/// for large files. `POST` creates an upload from `Upload-Length` and `Upload-Metadata` (`bucketName`, `objectName`,
/// `contentType`, `cacheControl`, base64 each), `HEAD` says where it stands, `PATCH` appends at `Upload-Offset`; the
/// last byte stores the object. Only the account that created an upload may see or continue it.
struct ResumableUploadRoutes {
    let storage: ObjectStorageService
    /// `--public-url`, which absolute `Location`s start with; without it they are paths, never built from `Host`.
    let publicURL: String?

    static let tusVersion = "1.0.0"

    /// `uploads`: the group of streamed bodies (`PATCH`), whose handlers bound their own database steps.
    func register(on group: DeadlineGroup<AuthenticatedContext>, uploads: RouterGroup<AuthenticatedContext>) {
        let storage = self.storage
        let base = publicURL.map { $0.hasSuffix("/") ? String($0.dropLast()) : $0 } ?? ""
        group.post("upload/resumable") { request, context in
            try Self.checkVersion(request)
            guard let length = request.headers[.uploadLength].flatMap(Int64.init), length >= 0 else {
                throw APIError(.badRequest, .badRequest, "Upload-Length must be the file's length in bytes (deferred lengths are not supported).")
            }
            let metadata = try Self.metadata(request.headers[HTTPField.Name("Upload-Metadata")!])
            guard let bucketName = metadata["bucketName"], let name = metadata["objectName"].map(ObjectStorageService.canonicalName) else {
                throw APIError(.badRequest, .badRequest, "Upload-Metadata must carry bucketName and objectName (base64 each).")
            }
            let bucket = try storage.bucket(bucketName)
            let limit = min(bucket.fileSizeLimit ?? storage.blobs.limits.maximumBlobBytes, storage.blobs.limits.maximumBlobBytes)
            guard length <= limit else {
                throw APIError(.contentTooLarge, .payloadTooLarge, "Payload too large: the object exceeds the maximum allowed size of \(limit) bytes.")
            }
            let contentType = metadata["contentType"] ?? BlobReference.defaultContentType
            guard bucket.accepts(contentType: contentType) else {
                throw APIError(.unsupportedMediaType, .invalidMimeType, "mime type \(contentType.prefix(100)) is not supported by bucket \(bucket.name).")
            }
            let upsert = request.headers[HTTPField.Name("x-upsert")!]?.lowercased() == "true"
            let space = try await storage.checkWritable(by: context.caller.userID, bucket: bucket, name: name)
            if !upsert, try await storage.catalog.object(bucket: bucketName, name: name) != nil { throw storage.duplicate }
            try await storage.checkQuota(of: context.caller.userID, adding: length, opening: true)
            let upload = ResumableUpload(
                id: .random(), bucket: bucketName, name: name, space: space, owner: context.caller.userID, contentType: contentType,
                cacheControl: ObjectStorageService.maxAge(metadata["cacheControl"]), upsert: upsert, length: length, createdAt: Date()
            )
            try await storage.catalog.saveResumableUpload(upload)
            return Response(status: .created, headers: [
                .location: "\(base)/storage/v1/upload/resumable/\(upload.id.text)", .tusResumable: Self.tusVersion,
                .uploadOffset: "0", .contentLength: "0",
            ])
        }
        group.head("upload/resumable/:id") { request, context in
            try Self.checkVersion(request)
            let upload = try await Self.upload(context, storage)
            _ = try await storage.checkWritable(by: upload.owner, bucket: try storage.bucket(upload.bucket), name: upload.name)
            let received = try await storage.blobs.store.upload(upload.id)?.received ?? 0
            return Response(status: .ok, headers: [
                .uploadOffset: "\(received)", .uploadLength: "\(upload.length)", .tusResumable: Self.tusVersion, .cacheControl: "no-store",
            ])
        }
        uploads.patch("upload/resumable/:id") { request, context in
            try Self.checkVersion(request)
            guard request.headers[.contentType]?.lowercased().hasPrefix("application/offset+octet-stream") == true else {
                throw APIError(.unsupportedMediaType, .badRequest, "A TUS PATCH carries Content-Type: application/offset+octet-stream.")
            }
            guard let offset = request.headers[.uploadOffset].flatMap(Int64.init), offset >= 0 else {
                throw APIError(.badRequest, .badRequest, "Upload-Offset must be where the body starts (HEAD says where the upload stands).")
            }
            let upload = try await Self.upload(context, storage)
            try request.refuseDeclaredLength(over: upload.length - offset)
            // Membership is checked again: someone removed from the space, or made a viewer, cannot go on.
            _ = try await RequestDeadline.bound {
                try await storage.checkWritable(by: upload.owner, bucket: try storage.bucket(upload.bucket), name: upload.name)
            }
            let received: Int64
            do {
                received = try await storage.blobs.store.append(
                    upload.id, length: upload.length, at: offset, body: CountedBytes(base: request.body, counter: storage.blobs.metrics.received)
                )
            } catch BlobStoreError.beyondLength {
                try? await storage.blobs.store.discard(upload.id)
                try? await storage.catalog.deleteResumableUpload(id: upload.id)
                throw APIError(.contentTooLarge, .payloadTooLarge, "The body carries more bytes than Upload-Length leaves, so the upload was discarded.")
            } catch let error as BlobStoreError {
                throw BlobService.refusal(error)
            }
            if received == upload.length {
                try await RequestDeadline.bound {
                    let key: BlobKey
                    do {
                        key = try await storage.blobs.store.complete(upload.id, space: upload.space, expected: nil)
                    } catch let error as BlobStoreError {
                        throw BlobService.refusal(error)
                    }
                    _ = try await storage.save(
                        bucket: upload.bucket, name: upload.name, blob: key, contentType: upload.contentType, cacheControl: upload.cacheControl,
                        owner: upload.owner, upsert: upload.upsert
                    )
                    try await storage.catalog.deleteResumableUpload(id: upload.id)
                }
            }
            return Response(status: .noContent, headers: [.uploadOffset: "\(received)", .tusResumable: Self.tusVersion])
        }
        group.delete("upload/resumable/:id") { request, context in
            try Self.checkVersion(request)
            let upload = try await Self.upload(context, storage)
            try await storage.blobs.store.discard(upload.id)
            try await storage.catalog.deleteResumableUpload(id: upload.id)
            return Response(status: .noContent, headers: [.tusResumable: Self.tusVersion])
        }
    }

    /// The caller's upload named in the path; `404` for anyone else's or one that finished.
    private static func upload(_ context: AuthenticatedContext, _ storage: ObjectStorageService) async throws -> ResumableUpload {
        guard let id = context.parameters.get("id").flatMap(UploadID.init(parsing:)),
              let upload = try await RequestDeadline.bound({ try await storage.catalog.resumableUpload(id: id) }),
              upload.owner == context.caller.userID
        else {
            throw APIError(.notFound, .objectNotFound, "No such upload: it finished, was terminated, expired, or is another account's.")
        }
        return upload
    }

    private static func checkVersion(_ request: Request) throws {
        guard request.headers[.tusResumable] == tusVersion else {
            throw APIError(.preconditionFailed, .unsupportedTusVersion, "Send Tus-Resumable: 1.0.0.", headers: [HTTPField.Name("Tus-Version")!: tusVersion])
        }
    }

    /// `Upload-Metadata`: comma-separated `key base64value` pairs.
    static func metadata(_ header: String?) throws -> [String: String] {
        var values: [String: String] = [:]
        for pair in (header ?? "").split(separator: ",") {
            let parts = pair.trimmingCharacters(in: .whitespaces).split(separator: " ", maxSplits: 1)
            guard let key = parts.first else { continue }
            guard parts.count == 2 else {
                values[String(key)] = ""
                continue
            }
            guard let data = Data(base64Encoded: String(parts[1])), let text = String(data: data, encoding: .utf8) else {
                throw APIError(.badRequest, .badRequest, "Upload-Metadata's value of \(key.prefix(32)) is not base64 of UTF-8 text.")
            }
            values[String(key)] = text
        }
        return values
    }
}

extension HTTPField.Name {
    /// `Tus-Resumable`: the TUS version of a request or response.
    static let tusResumable = Self("Tus-Resumable")!
}
