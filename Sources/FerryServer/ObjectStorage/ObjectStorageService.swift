import FerryCore
import FerrySecurity
import Foundation
import HTTPTypes
import Logging
import NIOCore

/// The rules of Supabase Storage's API on Ferry: buckets come from the schema; an object's path starts with the id of
/// the space it belongs to (seed 004's `{userId}/{file}` is the personal space); members and above write, every
/// member reads, anyone else gets `404 not_found`, exactly as for an object that does not exist. Bytes are blobs of
/// that space, so they stream, resume and get collected like a record's files.
struct ObjectStorageService: Sendable {
    let catalog: any ObjectCatalog
    let blobs: BlobService
    let schema: Schema
    let signer: URLTokenSigner
    let logger: Logger
    var now: @Sendable () -> Date = Date.init

    /// The longest object path accepted, in bytes.
    static let maximumPathBytes = 1024
    /// How many objects a listing looks at, at most.
    static let listingScanLimit = 10_000

    func bucket(_ name: String) throws -> BucketDefinition {
        guard let bucket = schema.bucket(named: name) else {
            throw APIError(.notFound, .bucketNotFound, "Bucket not found: no bucket '\(name.prefix(64))' is declared in the schema.")
        }
        return bucket
    }

    /// The space an object path belongs to: its first segment.
    func space(ofPath name: String) throws -> UUID {
        let segments = name.split(separator: "/", omittingEmptySubsequences: false)
        guard !name.isEmpty, name.utf8.count <= Self.maximumPathBytes, !segments.contains(where: { $0.isEmpty || $0 == "." || $0 == ".." }),
              !name.utf8.contains(where: { $0 < 0x20 })
        else {
            throw APIError(.badRequest, .invalidKey, "Invalid key: an object's path has non-empty segments, no '.' or '..', at most \(Self.maximumPathBytes) bytes.")
        }
        guard segments.count >= 2, let space = UUID(uuidString: String(segments[0])) else {
            throw APIError(.badRequest, .invalidKey, "Invalid key: an object's path starts with the id of its space, as in {space}/{file} (your personal space's id is your user id).")
        }
        return space
    }

    /// The object at `name` if `user` may read it; `404 not_found` otherwise.
    func readable(by user: UUID, bucket: String, name: String) async throws -> StoredObject {
        _ = try self.bucket(bucket)
        let space = try space(ofPath: name)
        guard try await blobs.role(of: user, in: space) != nil, let object = try await catalog.object(bucket: bucket, name: name) else {
            throw notFound
        }
        return object
    }

    /// An object of a public bucket, for anyone.
    func publicObject(bucket name: String, name path: String) async throws -> StoredObject {
        guard try bucket(name).isPublic, let object = try await catalog.object(bucket: name, name: path) else { throw notFound }
        return object
    }

    /// Checks that `user` may write `name` in `bucket`; returns its space.
    func checkWritable(by user: UUID, bucket: BucketDefinition, name: String) async throws -> UUID {
        let space = try space(ofPath: name)
        guard let role = try await blobs.role(of: user, in: space) else { throw notFound }
        guard role.canWrite else {
            throw APIError(.forbidden, .forbiddenSpace, "Your role in space \(space.lowercased) is \(role.rawValue), which cannot upload.")
        }
        return space
    }

    /// Stores `body` as object `name` of `bucket`, for `user`: refused when one exists and `upsert` is false.
    func upload<Body: AsyncSequence & Sendable>(
        by user: UUID, bucket bucketName: String, name: String, contentType declared: String?, cacheControl: String?, upsert: Bool,
        body: Body, contentTypeAfterBody: @Sendable () -> String? = { nil }
    ) async throws -> StoredObject where Body.Element == ByteBuffer {
        let bucket = try self.bucket(bucketName)
        let space = try await checkWritable(by: user, bucket: bucket, name: name)
        if let declared, !bucket.accepts(contentType: declared) { throw mimeRefused(declared, bucket) }
        if !upsert, try await catalog.object(bucket: bucketName, name: name) != nil { throw duplicate }
        let limit = min(bucket.fileSizeLimit ?? blobs.limits.maximumBlobBytes, blobs.limits.maximumBlobBytes)
        let id = UploadID.random()
        do {
            _ = try await blobs.store.append(id, length: limit, at: 0, body: CountedBytes(base: body, counter: blobs.metrics.received))
        } catch BlobStoreError.beyondLength {
            try? await blobs.store.discard(id)
            throw APIError(.contentTooLarge, .payloadTooLarge, "Payload too large: the object exceeds the maximum allowed size of \(limit) bytes.")
        } catch is MultipartFileError {
            try? await blobs.store.discard(id)
            throw APIError(.badRequest, .badRequest, "The multipart body has no file part.")
        } catch {
            try? await blobs.store.discard(id)
            throw error
        }
        _ = try await blobs.store.seal(id)
        let contentType = contentTypeAfterBody() ?? declared ?? BlobReference.defaultContentType
        if !bucket.accepts(contentType: contentType) {
            try? await blobs.store.discard(id)
            throw mimeRefused(contentType, bucket)
        }
        let key = try await blobs.store.complete(id, space: space, expected: nil)
        return try await save(
            bucket: bucketName, name: name, blob: key, contentType: contentType, cacheControl: cacheControl, owner: user, upsert: upsert
        )
    }

    /// Points `name` at a stored blob.
    func save(
        bucket: String, name: String, blob: BlobKey, contentType: String, cacheControl: String?, owner: UUID, upsert: Bool
    ) async throws -> StoredObject {
        guard let size = try await blobs.store.size(of: blob) else { throw notFound }
        let time = now()
        let existing = try await catalog.object(bucket: bucket, name: name)
        let object = StoredObject(
            id: existing?.id ?? UUID(), bucket: bucket, name: name, space: blob.space, sha256: blob.sha256, size: size,
            contentType: String(contentType.prefix(BlobReference.maximumContentTypeLength)),
            cacheControl: Self.maxAge(cacheControl), owner: owner, createdAt: existing?.createdAt ?? time, updatedAt: time
        )
        guard try await catalog.saveObject(object, replace: upsert) else { throw duplicate }
        logger.debug("object stored", metadata: ["ferry.storage.bucket": "\(bucket)", "ferry.blob.size": "\(size)"])
        return object
    }

    /// Deletes the named objects `user` may write; returns those deleted.
    func remove(by user: UUID, bucket: String, names: [String]) async throws -> [StoredObject] {
        _ = try self.bucket(bucket)
        guard names.count <= 1000, names.allSatisfy({ $0.count <= Self.maximumPathBytes }) else {
            throw APIError(.badRequest, .badRequest, "Remove at most 1000 objects per request, each path at most \(Self.maximumPathBytes) characters.")
        }
        var allowed: [String] = []
        var roles: [UUID: SpaceRole?] = [:]
        for name in names {
            guard let space = try? space(ofPath: name) else { continue }
            if roles[space] == nil { roles[space] = .some(try await blobs.role(of: user, in: space)) }
            if roles[space]??.canWrite == true { allowed.append(name) }
        }
        return try await catalog.deleteObjects(bucket: bucket, names: allowed)
    }

    /// A signed URL's token for reading `name` (kind `r`) or writing it (kind `w`, for `owner`, with `upsert`).
    func signedToken(kind: String, bucket: String, name: String, expiresIn seconds: Int, owner: UUID? = nil, upsert: Bool = false) -> String {
        var claim: [String: JSONValue] = [
            "k": .string(kind), "b": .string(bucket), "n": .string(name),
            "e": .number((now().timeIntervalSince1970 + Double(seconds)).rounded(.down)),
        ]
        if let owner { claim["o"] = .string(owner.lowercased) }
        if upsert { claim["u"] = true }
        return signer.sign(Data(JSONValue.object(claim).jsonText.utf8))
    }

    /// The claim of a signed URL's token, checked against its kind, bucket, object and clock.
    func verifiedClaim(_ token: String?, kind: String, bucket: String, name: String) throws -> [String: JSONValue] {
        guard let token, let data = signer.verify(token), case .object(let claim)? = try? JSONValue(parsing: data),
              claim["k"] == .string(kind), claim["b"] == .string(bucket), claim["n"] == .string(name),
              case .number(let expiry)? = claim["e"], expiry >= now().timeIntervalSince1970
        else {
            throw APIError(.badRequest, .invalidSignature, "Invalid signature: the token is malformed, for another object, or expired.")
        }
        return claim
    }

    /// `Cache-Control`'s max-age as Storage keeps it (seconds), from `3600` or `max-age=3600`.
    static func maxAge(_ value: String?) -> String {
        guard let value else { return "max-age=3600" }
        let digits = value.filter(\.isNumber)
        return digits.isEmpty || digits.count > 10 ? "max-age=3600" : "max-age=\(digits)"
    }

    var notFound: APIError { APIError(.notFound, .objectNotFound, "Object not found") }
    var duplicate: APIError { APIError(.conflict, .duplicateObject, "The resource already exists; upload with x-upsert: true to replace it.") }

    private func mimeRefused(_ type: String, _ bucket: BucketDefinition) -> APIError {
        APIError(
            .unsupportedMediaType, .invalidMimeType,
            "mime type \(type.prefix(100)) is not supported by bucket \(bucket.name) (it accepts \((bucket.allowedMimeTypes ?? []).joined(separator: ", ")))."
        )
    }
}
