extension ErrorCode {
    // Storage (`/storage/v1`), in the Supabase Storage error body's `error` and `code`.

    /// No bucket of that name is declared in the schema.
    public static let bucketNotFound: ErrorCode = "bucket_not_found"
    /// No object at that path, or the caller may not read it (the two are not told apart).
    public static let objectNotFound: ErrorCode = "not_found"
    /// An object already exists at that path and the upload did not ask to replace it (`x-upsert: true`).
    public static let duplicateObject: ErrorCode = "Duplicate"
    /// An object's path is empty, too long, has empty or dot segments, or does not start with a space id.
    public static let invalidKey: ErrorCode = "InvalidKey"
    /// The bucket does not accept the object's content type.
    public static let invalidMimeType: ErrorCode = "invalid_mime_type"
    /// A signed URL's token is malformed, forged, for another object, or expired.
    public static let invalidSignature: ErrorCode = "InvalidSignature"
    /// Buckets are declared in the schema file, not created through the API.
    public static let bucketsAreDeclared: ErrorCode = "buckets_are_declared"
    /// A TUS request without `Tus-Resumable: 1.0.0`.
    public static let unsupportedTusVersion: ErrorCode = "unsupported_tus_version"
}
