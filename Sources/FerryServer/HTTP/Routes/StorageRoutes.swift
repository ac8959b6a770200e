import FerryCore
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// `/storage/v1`: the subset of Supabase Storage's API that storage3, supabase-js and supabase-swift use for objects
/// (docs/blobs.md, "Supabase Storage"). Objects are blobs of the space their path starts with.
struct StorageRoutes {
    let storage: ObjectStorageService

    /// Routes that need a signed-in caller; `uploads` receive streamed bodies and bound their own database steps.
    func register(authenticated group: DeadlineGroup<AuthenticatedContext>, uploads: RouterGroup<AuthenticatedContext>) {
        let storage = self.storage
        group.get("bucket") { _, _ in
            JSONResponse(JSONValue.array(storage.schema.buckets.map(Self.bucketJSON)))
        }
        group.get("bucket/:id") { _, context in
            JSONResponse(Self.bucketJSON(try storage.bucket(context.parameters.get("id") ?? "")))
        }
        for method in [HTTPRequest.Method.post, .put, .delete] {
            group.on("bucket", method: method) { _, _ in throw Self.bucketsAreDeclared }
            group.on("bucket/:id", method: method) { _, _ in throw Self.bucketsAreDeclared }
            group.on("bucket/:id/empty", method: method) { _, _ in throw Self.bucketsAreDeclared }
        }
        group.post("object/list/:bucket") { request, context in
            var request = request
            let body = try await request.decodeJSON(ObjectListRequest.self)
            let bucket = try context.parameters.require("bucket")
            return JSONResponse(try await ObjectListing(storage: storage, user: context.caller.userID).list(bucket: bucket, request: body))
        }
        group.get("object/info/:bucket/**") { _, context in
            let (bucket, name) = try Self.location(context)
            let object = try await storage.readable(by: context.caller.userID, bucket: bucket, name: name)
            return JSONResponse(Self.infoJSON(object))
        }
        group.post("object/sign/:bucket/**") { request, context in
            var request = request
            let body = try await request.decodeJSON(SignRequest.self)
            let (bucket, name) = try Self.location(context)
            let object = try await storage.readable(by: context.caller.userID, bucket: bucket, name: name)
            let token = try storage.signedReadToken(object, signer: context.caller.userID, expiresIn: try body.seconds())
            return JSONResponse(JSONValue.object(["signedURL": .string(Self.signedPath(bucket, name, token))]))
        }
        group.post("object/sign/:bucket") { request, context in
            var request = request
            let body = try await request.decodeJSON(SignRequest.self, limit: Self.listBodyLimit)
            let bucket = try context.parameters.require("bucket")
            let seconds = try body.seconds()
            guard let paths = body.paths, paths.count <= 1000, paths.allSatisfy({ $0.count <= ObjectStorageService.maximumPathBytes }) else {
                throw APIError(.badRequest, .badRequest, "paths must list the objects to sign: at most 1000, each at most \(ObjectStorageService.maximumPathBytes) characters.")
            }
            let names = paths.map(ObjectStorageService.canonicalName)
            // The caller's spaces are read once for every path.
            let tokens = try await storage.signedReadTokens(by: context.caller.userID, bucket: bucket, names: names, expiresIn: seconds)
            return JSONResponse(JSONValue.array(zip(paths, zip(names, tokens)).map { path, signed in
                guard let token = signed.1 else {
                    return .object(["path": .string(path), "error": "Either the object does not exist or you do not have access to it", "signedURL": .null])
                }
                return .object(["path": .string(path), "error": .null, "signedURL": .string(Self.signedPath(bucket, signed.0, token))])
            }))
        }
        group.post("object/upload/sign/:bucket/**") { request, context in
            let (bucket, name) = try Self.location(context)
            let definition = try storage.bucket(bucket)
            _ = try await storage.checkWritable(by: context.caller.userID, bucket: definition, name: name)
            let token = storage.signedUploadToken(bucket: bucket, name: name, owner: context.caller.userID, upsert: Self.isUpsert(request))
            return JSONResponse(JSONValue.object([
                "url": .string("/object/upload/sign/\(bucket)/\(Self.encoded(name))?token=\(token)"), "token": .string(token),
            ]))
        }
        for prefix in ["object/", "object/authenticated/"] {
            group.get(RouterPath(prefix + ":bucket/**")) { request, context in
                let (bucket, name) = try Self.location(context)
                let object = try await storage.readable(by: context.caller.userID, bucket: bucket, name: name)
                return try await Self.download(object, request, context, storage)
            }
        }
        uploads.post("object/:bucket/**") { request, context in
            try await Self.upload(request, context, storage, upsert: Self.isUpsert(request))
        }
        uploads.put("object/:bucket/**") { request, context in
            // Storage's update replaces an object that exists.
            let (bucket, name) = try Self.location(context)
            _ = try await RequestDeadline.bound { try await storage.readable(by: context.caller.userID, bucket: bucket, name: name) }
            return try await Self.upload(request, context, storage, upsert: true)
        }
        group.delete("object/:bucket") { request, context in
            var request = request
            let body = try await request.decodeJSON(RemoveRequest.self, limit: Self.listBodyLimit)
            let bucket = try context.parameters.require("bucket")
            let names = body.prefixes.map(ObjectStorageService.canonicalName)
            let removed = try await storage.remove(by: context.caller.userID, bucket: bucket, names: names)
            return JSONResponse(JSONValue.array(removed.map(Self.infoJSON)))
        }
    }

    /// Routes anyone may call: public buckets and signed URLs (the token is the authorization).
    func register(open group: DeadlineGroup<FerryRequestContext>, openUploads: RouterGroup<FerryRequestContext>) {
        let storage = self.storage
        group.get("object/public/:bucket/**") { request, context in
            let (bucket, name) = try Self.location(context)
            let object = try await storage.publicObject(bucket: bucket, name: name)
            return try await Self.download(object, request, context, storage)
        }
        group.get("object/sign/:bucket/**") { request, context in
            let (bucket, name) = try Self.location(context)
            let token = request.uri.queryParameters.get("token")
            let object = try await storage.signedObject(token, bucket: bucket, name: name)
            return try await Self.download(object, request, context, storage)
        }
        openUploads.put("object/upload/sign/:bucket/**") { request, context in
            let (bucket, name) = try Self.location(context)
            let claim = try storage.verifiedClaim(request.uri.queryParameters.get("token"), kind: "w", bucket: bucket, name: name)
            guard case .string(let ownerText)? = claim["o"], let owner = UUID(wireText: ownerText) else { throw storage.notFound }
            let object = try await Self.store(request, storage, owner: owner, bucket: bucket, name: name, upsert: claim["u"] == true)
            return JSONResponse(Self.uploadJSON(object))
        }
    }

    // MARK: Uploads and downloads

    private static func upload(
        _ request: Request, _ context: AuthenticatedContext, _ storage: ObjectStorageService, upsert: Bool
    ) async throws -> JSONResponse {
        let (bucket, name) = try location(context)
        let object = try await store(request, storage, owner: context.caller.userID, bucket: bucket, name: name, upsert: upsert)
        return JSONResponse(uploadJSON(object))
    }

    /// Stores a request's body: a multipart form's file part, or the raw body.
    private static func store(
        _ request: Request, _ storage: ObjectStorageService, owner: UUID, bucket: String, name: String, upsert: Bool
    ) async throws -> StoredObject {
        let cacheControl = request.headers[.cacheControl]
        let contentType = request.headers[.contentType]
        if contentType?.lowercased().hasPrefix("multipart/form-data") == true, MultipartFile<RequestBody>.boundary(of: contentType) == nil {
            throw APIError(.badRequest, .validationFailed, "A multipart/form-data body needs a boundary parameter of 1 to 200 characters in its Content-Type.")
        }
        if let boundary = MultipartFile<RequestBody>.boundary(of: contentType) {
            let file = MultipartFile(body: request.body, boundary: boundary)
            return try await storage.upload(
                by: owner, bucket: bucket, name: name, contentType: nil, cacheControl: cacheControl, upsert: upsert, body: file,
                contentTypeAfterBody: { file.state.contentType }
            )
        }
        return try await storage.upload(
            by: owner, bucket: bucket, name: name, contentType: request.headers[.contentType], cacheControl: cacheControl, upsert: upsert,
            declaredLength: request.declaredLength, body: request.body
        )
    }

    private static func download(
        _ object: StoredObject, _ request: Request, _ context: some FerryChanneledContext, _ storage: ObjectStorageService
    ) async throws -> Response {
        let range = try ByteRange(header: request.headers[.range])
        guard (range?.start ?? 0) < object.size || (range?.start ?? 0) == 0 else {
            throw APIError(.rangeNotSatisfiable, .badRequest, "The object has \(object.size) bytes; a range must start within them.", headers: [.contentRange: "bytes */\(object.size)"])
        }
        let bytes = try await storage.blobs.store.read(object.blob, from: range?.start ?? 0)
        var extra: HTTPFields = [.lastModified: object.updatedAt.httpDate]
        let download = request.uri.queryParameters.get("download")
        // What could run in a browser (HTML, SVG, scripts, unknown types) is always an attachment, never a page.
        if download != nil || MIMEType(parsing: object.contentType)?.isInertInBrowsers != true {
            let filename = download.flatMap { $0.isEmpty ? nil : $0 } ?? String(object.name.split(separator: "/").last ?? "")
            extra[.contentDisposition] = "attachment; filename=\"\(filename.filter { $0 != "\"" && $0 != "\\" && !$0.isNewline && $0.isASCII && $0 >= " " })\""
        }
        return BlobResponse.make(
            size: object.size, range: range, bytes: bytes, contentType: object.contentType, eTag: object.sha256,
            cacheControl: object.cacheControl, sent: storage.blobs.metrics.sent,
            pacer: WritePacer(channel: context.channel, stallTimeout: storage.blobs.limits.stalledDownloadTimeout), extraHeaders: extra
        )
    }

    // MARK: Paths and shapes

    /// The bucket and the object path of a `:bucket/**` route, percent-decoded.
    static func location(_ context: some RequestContext) throws -> (bucket: String, name: String) {
        let bucket = try context.parameters.require("bucket")
        let joined = context.parameters.getCatchAll().joined(separator: "/")
        guard let name = joined.removingPercentEncoding, !name.isEmpty else {
            throw APIError(.badRequest, .invalidKey, "Invalid key: the object's path is missing or not valid percent-encoding.")
        }
        return (bucket, ObjectStorageService.canonicalName(name))
    }

    static func encoded(_ name: String) -> String {
        name.split(separator: "/", omittingEmptySubsequences: false)
            .map { $0.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed.subtracting(CharacterSet(charactersIn: "/?#"))) ?? String($0) }
            .joined(separator: "/")
    }

    static func signedPath(_ bucket: String, _ name: String, _ token: String) -> String {
        "/object/sign/\(bucket)/\(encoded(name))?token=\(token)"
    }

    static func isUpsert(_ request: Request) -> Bool {
        request.headers[HTTPField.Name("x-upsert")!]?.lowercased() == "true"
    }

    /// The body of a request that lists up to 1000 paths of up to 1024 bytes.
    static let listBodyLimit = 1_100_000

    static let bucketsAreDeclared = APIError(
        .forbidden, .bucketsAreDeclared, "Buckets are declared in the server's schema file (buckets: {name: {public: false}}), not created or changed through the API."
    )

    static func bucketJSON(_ bucket: BucketDefinition) -> JSONValue {
        .object([
            "id": .string(bucket.name), "name": .string(bucket.name), "public": .bool(bucket.isPublic), "owner": "",
            "file_size_limit": bucket.fileSizeLimit.map { .number(Double($0)) } ?? .null,
            "allowed_mime_types": bucket.allowedMimeTypes.map { .array($0.map(JSONValue.string)) } ?? .null,
            "created_at": "1970-01-01T00:00:00.000Z", "updated_at": "1970-01-01T00:00:00.000Z",
        ])
    }

    static func uploadJSON(_ object: StoredObject) -> JSONValue {
        .object(["Key": .string("\(object.bucket)/\(object.name)"), "Id": .string(object.id.lowercasedText)])
    }

    static func infoJSON(_ object: StoredObject) -> JSONValue {
        .object([
            "id": .string(object.id.lowercasedText), "name": .string(object.name), "bucket_id": .string(object.bucket),
            "owner": .string(object.owner.lowercasedText), "size": .number(Double(object.size)), "content_type": .string(object.contentType),
            "cache_control": .string(object.cacheControl), "etag": .string("\"\(object.sha256)\""),
            "created_at": .string(Timestamp.format(object.createdAt)), "updated_at": .string(Timestamp.format(object.updatedAt)),
            "last_modified": .string(Timestamp.format(object.updatedAt)), "metadata": ObjectListing.metadata(object),
        ])
    }
}

/// `POST /object/sign/…`'s body: `expiresIn` in seconds (storage3 sends it as a string), and `paths` to sign several.
struct SignRequest: Decodable, Sendable {
    var expiresIn: JSONValue
    var paths: [String]?

    func seconds() throws -> Int {
        let value: Double? = switch expiresIn {
        case .number(let number): number
        case .string(let text): Double(text)
        default: nil
        }
        guard let value, value >= 1, value <= 31_536_000, value.rounded() == value else {
            throw APIError(.badRequest, .badRequest, "expiresIn must be a whole number of seconds from 1 to 31536000 (a year).")
        }
        return Int(value)
    }
}

/// `DELETE /object/{bucket}`'s body.
struct RemoveRequest: Decodable, Sendable {
    var prefixes: [String]
}

extension Date {
    /// The HTTP date form (`Last-Modified`).
    var httpDate: String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter.string(from: self)
    }
}
