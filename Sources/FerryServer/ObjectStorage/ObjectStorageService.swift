import FerryCore
import FerrySecurity
import Foundation
import Logging
import NIOCore

/// The rules of Supabase Storage's API on Ferry: buckets come from the schema; an object's path starts with the id of
/// the space it belongs to (the sermon app's `{userId}/{file}` is the personal space); members and above write, every
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
            throw ServiceError(.notFound, .bucketNotFound, "Bucket not found: no bucket '\(name.prefix(64))' is declared in the schema.")
        }
        return bucket
    }

    /// The space an object path belongs to: its first segment.
    func space(ofPath name: String) throws -> UUID {
        let segments = name.split(separator: "/", omittingEmptySubsequences: false)
        guard !name.isEmpty, name.utf8.count <= Self.maximumPathBytes, !segments.contains(where: { $0.isEmpty || $0 == "." || $0 == ".." }),
              !name.unicodeScalars.contains(where: Self.isInvisibleOrControl)
        else {
            throw ServiceError(.invalidRequest, .invalidKey,
                "Invalid key: an object's path has non-empty segments, no '.' or '..', no control or invisible characters, at most \(Self.maximumPathBytes) bytes."
            )
        }
        guard segments.count >= 2, let space = UUID(wireText: String(segments[0])) else {
            throw ServiceError(.invalidRequest, .invalidKey, "Invalid key: an object's path starts with the id of its space, as in {space}/{file} (your personal space's id is your user id).")
        }
        return space
    }

    /// Control characters (DEL and C1 included), line and paragraph separators, and invisible format characters such as
    /// the byte-order mark: a name holding one would look like another in every listing. Joiners stay, for emoji.
    static func isInvisibleOrControl(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .control, .lineSeparator, .paragraphSeparator: true
        case .format: scalar.value != 0x200C && scalar.value != 0x200D
        default: false
        }
    }

    /// `name` with its space's id in the canonical lowercase form, so `{SPACE}/a` (Swift's `UUID.uuidString`) and
    /// `{space}/a` name one object, and listings find it.
    static func canonicalName(_ name: String) -> String {
        let end = name.firstIndex(of: "/") ?? name.endIndex
        guard let space = UUID(wireText: String(name[..<end])) else { return name }
        return space.lowercasedText + name[end...]
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

    /// Refuses an upload that would take `user` past a quota: `bytes` more stored, and one more open upload when `opening`.
    func checkQuota(of user: UUID, adding bytes: Int64, opening: Bool) async throws {
        let usage = try await catalog.usage(owner: user)
        let limits = blobs.limits
        if opening, usage.openUploads >= limits.maximumOpenUploadsPerAccount {
            throw quotaExceeded("\(usage.openUploads) uploads open, the most an account may have (finish or terminate one first)")
        }
        if opening, usage.openUploadBytes + bytes > limits.maximumOpenUploadBytesPerAccount {
            throw quotaExceeded("open uploads would declare \(usage.openUploadBytes + bytes) bytes, more than \(limits.maximumOpenUploadBytesPerAccount)")
        }
        if usage.storedBytes + bytes > limits.maximumStoredBytesPerAccount {
            throw quotaExceeded("objects would take \(usage.storedBytes + bytes) bytes, more than the \(limits.maximumStoredBytesPerAccount) an account may store")
        }
    }

    func quotaExceeded(_ what: String) -> ServiceError {
        ServiceError(.tooLarge, .quotaExceeded, "Quota exceeded: \(what).")
    }

    /// Checks that `user` may write `name` in `bucket`; returns its space.
    func checkWritable(by user: UUID, bucket: BucketDefinition, name: String) async throws -> UUID {
        let space = try space(ofPath: name)
        guard let role = try await blobs.role(of: user, in: space) else { throw notFound }
        guard role.canWrite else {
            throw ServiceError(.forbidden, .forbiddenSpace, "Your role in space \(space.lowercasedText) is \(role.rawValue), which cannot upload.")
        }
        return space
    }

    /// Stores `body` as object `name` of `bucket`, for `user`: refused when one exists and `upsert` is false, and, when
    /// the object's length is declared (`declaredLength`, a raw body's `Content-Length`) past the bucket's limit or the
    /// account's storage left, before a byte of it is read.
    func upload<Body: AsyncSequence & Sendable>(
        by user: UUID, bucket bucketName: String, name: String, contentType declared: String?, cacheControl: String?, upsert: Bool,
        declaredLength: Int64? = nil, body: Body, contentTypeAfterBody: @Sendable () -> String? = { nil }
    ) async throws -> StoredObject where Body.Element == ByteBuffer {
        let bucket = try self.bucket(bucketName)
        let space = try await checkWritable(by: user, bucket: bucket, name: name)
        if let declared, !bucket.accepts(contentType: declared) { throw mimeRefused(declared, bucket) }
        if !upsert, try await catalog.object(bucket: bucketName, name: name) != nil { throw duplicate }
        let sizeLimit = min(bucket.fileSizeLimit ?? blobs.limits.maximumBlobBytes, blobs.limits.maximumBlobBytes)
        let quotaLeft = blobs.limits.maximumStoredBytesPerAccount - (try await catalog.usage(owner: user).storedBytes)
        guard quotaLeft > 0 else { throw quotaExceeded("the account stores \(blobs.limits.maximumStoredBytesPerAccount) bytes of objects, its limit") }
        let limit = min(sizeLimit, quotaLeft)
        let tooLarge = limit < sizeLimit
            ? quotaExceeded("the object is larger than the \(limit) bytes left of the account's storage")
            : ServiceError(.tooLarge, .payloadTooLarge, "Payload too large: the object exceeds the maximum allowed size of \(limit) bytes.")
        if let declaredLength, declaredLength > limit { throw tooLarge }
        let id = UploadID.random()
        do {
            _ = try await blobs.store.append(id, length: limit, at: 0, body: CountedBytes(base: body, counter: blobs.metrics.received))
        } catch BlobStoreError.beyondLength {
            try? await blobs.store.discard(id)
            throw tooLarge
        } catch let error as MultipartFileError {
            try? await blobs.store.discard(id)
            switch error {
            case .noFile: throw ServiceError(.invalidRequest, .badRequest, "The multipart body has no file part.")
            case .malformed(let problem): throw ServiceError(.invalidRequest, .badRequest, "The multipart body cannot be read: \(problem).")
            }
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

    /// Points `name` at a stored blob, if `owner` may still write there: membership is checked again at the commit, so
    /// an upload that was under way when its owner left the space (or became a viewer) stores nothing.
    func save(
        bucket: String, name: String, blob: BlobKey, contentType: String, cacheControl: String?, owner: UUID, upsert: Bool
    ) async throws -> StoredObject {
        _ = try await checkWritable(by: owner, bucket: try self.bucket(bucket), name: name)
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
            throw ServiceError(.invalidRequest, .badRequest, "Remove at most 1000 objects per request, each path at most \(Self.maximumPathBytes) characters.")
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

    /// A signed URL's token for reading `object` (kind `r`), bound to its content and to `signer`: it reads the object
    /// only while the object still has those bytes and the signer is still a member of its space.
    func signedReadToken(_ object: StoredObject, signer user: UUID, expiresIn seconds: Int) throws -> String {
        let longest = Int(blobs.limits.maximumSignedURLLifetime.components.seconds)
        guard seconds <= longest else {
            throw ServiceError(.invalidRequest, .badRequest, "expiresIn may be at most \(longest) seconds on this server (--max-signed-url-seconds).")
        }
        return signedToken(kind: "r", bucket: object.bucket, name: object.name, expiresIn: seconds, claims: [
            "h": .string(object.sha256), "s": .string(user.lowercasedText),
        ])
    }

    /// Signed read tokens for `names` of `bucket`, by `user`, with the caller's spaces read once: `nil` for a name
    /// that does not exist or that `user` may not read.
    func signedReadTokens(by user: UUID, bucket: String, names: [String], expiresIn seconds: Int) async throws -> [String?] {
        _ = try self.bucket(bucket)
        let spaces = Set(try await blobs.spaces.spaces(userID: user).map(\.id))
        let readable = names.filter { name in (try? space(ofPath: name)).map(spaces.contains) == true }
        let objects = Dictionary(try await catalog.objects(bucket: bucket, named: readable).map { ($0.name, $0) }) { first, _ in first }
        return try names.map { name in try objects[name].map { try signedReadToken($0, signer: user, expiresIn: seconds) } }
    }

    /// The object a signed read URL's token names, while its bytes and its signer's membership are unchanged.
    func signedObject(_ token: String?, bucket: String, name: String) async throws -> StoredObject {
        let claim = try verifiedClaim(token, kind: "r", bucket: bucket, name: name)
        guard case .string(let hash)? = claim["h"], case .string(let signerText)? = claim["s"], let signer = UUID(wireText: signerText),
              let object = try await catalog.object(bucket: bucket, name: name), object.sha256 == hash,
              try await blobs.role(of: signer, in: object.space) != nil
        else {
            throw ServiceError(.invalidRequest, .invalidSignature, "Invalid signature: the object changed or its signer lost access since the URL was signed.")
        }
        return object
    }

    /// A signed URL's token for writing `name` (kind `w`, for `owner`, with `upsert`).
    func signedUploadToken(bucket: String, name: String, owner: UUID, upsert: Bool) -> String {
        var claims: [String: JSONValue] = ["o": .string(owner.lowercasedText)]
        if upsert { claims["u"] = true }
        return signedToken(kind: "w", bucket: bucket, name: name, expiresIn: 7200, claims: claims)
    }

    private func signedToken(kind: String, bucket: String, name: String, expiresIn seconds: Int, claims: [String: JSONValue]) -> String {
        var claim = claims
        claim["k"] = .string(kind)
        claim["b"] = .string(bucket)
        claim["n"] = .string(name)
        claim["e"] = .number((now().timeIntervalSince1970 + Double(seconds)).rounded(.down))
        return signer.sign(Data(JSONValue.object(claim).jsonText.utf8))
    }

    /// The claim of a signed URL's token, checked against its kind, bucket, object and clock.
    func verifiedClaim(_ token: String?, kind: String, bucket: String, name: String) throws -> [String: JSONValue] {
        guard let token, let data = signer.verify(token), case .object(let claim)? = try? JSONValue(parsing: data),
              claim["k"] == .string(kind), claim["b"] == .string(bucket), claim["n"] == .string(name),
              case .number(let expiry)? = claim["e"], expiry >= now().timeIntervalSince1970
        else {
            throw ServiceError(.invalidRequest, .invalidSignature, "Invalid signature: the token is malformed, for another object, or expired.")
        }
        return claim
    }

    /// `Cache-Control`'s max-age as Storage keeps it (seconds), from `3600` or `max-age=3600`.
    static func maxAge(_ value: String?) -> String {
        guard let value else { return "max-age=3600" }
        let digits = value.filter(\.isNumber)
        return digits.isEmpty || digits.count > 10 ? "max-age=3600" : "max-age=\(digits)"
    }

    var notFound: ServiceError { ServiceError(.notFound, .objectNotFound, "Object not found") }
    var duplicate: ServiceError { ServiceError(.conflict, .duplicateObject, "The resource already exists; upload with x-upsert: true to replace it.") }

    private func mimeRefused(_ type: String, _ bucket: BucketDefinition) -> ServiceError {
        ServiceError(.unsupportedMediaType, .invalidMimeType,
            "mime type \(type.prefix(100)) is not supported by bucket \(bucket.name) (it accepts \((bucket.allowedMimeTypes ?? []).joined(separator: ", ")))."
        )
    }
}
