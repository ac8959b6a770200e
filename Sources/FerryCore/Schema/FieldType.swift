/// The type of a collection field, as written in a schema file.
///
/// Each type has one wire representation (JSON) and one column type per database engine;
/// see ``SQLDialect/columnType(for:)``.
public enum FieldType: String, Sendable, Codable, CaseIterable {
    /// A UTF-8 string.
    case text
    /// A 64-bit signed integer.
    case integer
    /// A 64-bit floating-point number.
    case real
    /// `true` or `false`.
    case bool
    /// An instant in time, carried on the wire as an ISO 8601 string in UTC.
    case timestamp
    /// A UUID, carried on the wire as its canonical string.
    case uuid
    /// Any JSON value (object, array, string, number, bool).
    case json
    /// A few bytes inside the record, carried on the wire as base64 (the record's size limit applies).
    case bytes
    /// A file beside the record: the field holds a ``BlobReference`` (`{"sha256", "size", "content_type"}`) and the
    /// content travels through the blob endpoints (`docs/blobs.md`).
    case blob
}
