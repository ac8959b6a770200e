import Foundation

/// What a `blob` field holds: the address of a file that travels beside the record, never the bytes themselves.
///
/// On the wire it is `{"sha256": "<64 hex digits>", "size": 1234, "content_type": "audio/mp4"}`. The hash is of the
/// bytes the server stores: the file itself, or in an end-to-end encrypted space its ciphertext (so the address
/// reveals nothing about the plaintext). The server refuses a record whose blob it does not hold in the record's space.
public struct BlobReference: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The SHA-256 of the stored bytes, 64 lowercase hexadecimal digits.
    public var sha256: String
    /// The stored bytes' length.
    public var size: Int64
    /// The MIME type the app gave the file (`application/octet-stream` when none was given).
    public var contentType: String

    /// The type given to a file of unknown type.
    public static let defaultContentType = "application/octet-stream"
    /// The longest content type accepted.
    public static let maximumContentTypeLength = 255

    /// Creates a reference; `sha256` must be 64 lowercase hexadecimal digits (see ``isValidHash(_:)``).
    public init(sha256: String, size: Int64, contentType: String = Self.defaultContentType) {
        self.sha256 = sha256
        self.size = size
        self.contentType = contentType
    }

    enum CodingKeys: String, CodingKey {
        case sha256, size
        case contentType = "content_type"
    }

    public var description: String { "sha256:\(sha256.prefix(12))… (\(size) bytes, \(contentType))" }

    /// The wire form.
    public var json: JSONValue {
        .object(["sha256": .string(sha256), "size": .number(Double(size)), "content_type": .string(contentType)])
    }

    /// Reads the wire form, or says what is wrong with it (in words for a person).
    public init(json: JSONValue) throws(Problem) {
        guard case .object(let members) = json else { throw Problem("a blob field holds {\"sha256\", \"size\", \"content_type\"}") }
        if let extra = members.keys.first(where: { !["sha256", "size", "content_type"].contains($0) }) {
            throw Problem("a blob reference has no member '\(extra.prefix(32))'")
        }
        guard case .string(let hash)? = members["sha256"], Self.isValidHash(hash) else {
            throw Problem("sha256 must be 64 lowercase hexadecimal digits")
        }
        guard case .number(let number)? = members["size"], number.rounded() == number, number >= 0, number <= 9_007_199_254_740_991 else {
            throw Problem("size must be a whole number of bytes")
        }
        var type = Self.defaultContentType
        switch members["content_type"] {
        case nil, .null?: break
        case .string(let text)? where Self.isValidContentType(text): type = text
        default: throw Problem("content_type must be a MIME type such as audio/mp4 (printable ASCII, at most \(Self.maximumContentTypeLength) characters)")
        }
        self.init(sha256: hash, size: Int64(number), contentType: type)
    }

    /// Whether `text` is 64 lowercase hexadecimal digits.
    public static func isValidHash(_ text: some StringProtocol) -> Bool {
        text.utf8.count == 64 && text.utf8.allSatisfy { (48...57).contains($0) || (97...102).contains($0) }
    }

    /// Whether `text` looks like a MIME type: `type/subtype`, printable ASCII, bounded.
    public static func isValidContentType(_ text: String) -> Bool {
        text.utf8.count <= maximumContentTypeLength && text.contains("/")
            && text.utf8.allSatisfy { $0 >= 0x20 && $0 < 0x7F }
    }

    /// Why a value is not a blob reference.
    public struct Problem: Error, Sendable, CustomStringConvertible {
        public var description: String
        init(_ description: String) { self.description = description }
    }
}

extension CollectionDefinition {
    /// Whether a field's values are encrypted in an end-to-end encrypted space or collection. Two kinds stay in clear:
    /// the parent link, which the server reads to cascade deletes, and blob references, which name ciphertext already
    /// and which the server must read to check the blob is there.
    public func isSealed(_ field: FieldDefinition) -> Bool {
        field.name != parent?.field && field.type != .blob
    }

    /// ``isSealed(_:)`` by name; an unknown field counts as sealed.
    public func isSealed(fieldNamed name: String) -> Bool {
        field(named: name).map(isSealed) ?? true
    }

    /// The collection's blob fields.
    public var blobFields: [FieldDefinition] { fields.filter { $0.type == .blob } }
}
