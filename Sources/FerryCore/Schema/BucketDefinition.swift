import Foundation

/// A Storage bucket declared in a schema file (`buckets: {sermon-audio: {public: false}}`), served at `/storage/v1`.
public struct BucketDefinition: Sendable, Hashable, Codable {
    /// The bucket's id and name.
    public var name: String
    /// Whether anyone may read its objects at `/storage/v1/object/public/…`, without signing in.
    public var isPublic: Bool
    /// The largest object accepted, in bytes (`nil`: the server's blob limit).
    public var fileSizeLimit: Int64?
    /// The MIME types accepted (`nil`: any); `audio/*` matches every audio type.
    public var allowedMimeTypes: [String]?

    /// Creates a bucket definition.
    public init(name: String, isPublic: Bool = false, fileSizeLimit: Int64? = nil, allowedMimeTypes: [String]? = nil) {
        self.name = name
        self.isPublic = isPublic
        self.fileSizeLimit = fileSizeLimit
        self.allowedMimeTypes = allowedMimeTypes
    }

    /// Whether `contentType` may be stored here: a well-formed media type that the allow-list, if any, names.
    public func accepts(contentType: String) -> Bool {
        guard let type = MIMEType(parsing: contentType) else { return false }
        guard let allowed = allowedMimeTypes, !allowed.isEmpty else { return true }
        return allowed.contains(where: type.matches)
    }

    /// Why `name` cannot name a bucket, or `nil`: 1–63 characters of `a-z 0-9 . _ -`, starting with a letter or digit.
    static func problem(with name: String) -> String? {
        let bytes = Array(name.utf8)
        guard (1...63).contains(bytes.count) else { return "a bucket name has 1 to 63 characters" }
        let allowed = { (byte: UInt8) in (97...122).contains(byte) || (48...57).contains(byte) || byte == 46 || byte == 95 || byte == 45 }
        guard bytes.allSatisfy(allowed), let first = bytes.first, (97...122).contains(first) || (48...57).contains(first) else {
            return "a bucket name uses lowercase letters, digits, '.', '_' and '-', and starts with a letter or digit"
        }
        return nil
    }
}
