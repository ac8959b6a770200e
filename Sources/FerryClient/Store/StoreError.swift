import FerryCore

/// Why the local store refused a read or a write: a stable ``code`` to switch on and a ``message`` a person can act on.
public struct StoreError: FerryError, Hashable {
    /// The stable machine code (the server's rejection codes where the same rule applies on the device).
    public var code: ErrorCode
    /// What went wrong and what to do about it.
    public var message: String

    /// Creates an error.
    public init(code: ErrorCode, message: String) {
        self.code = code
        self.message = message
    }

    static func unknownCollection(_ name: String, known: [String] = []) -> StoreError {
        StoreError(code: .unknownCollection, message: "The schema has no collection '\(name)'\(NearMiss.hint(for: name, among: known)).")
    }

    static func unknownField(_ field: String, in collection: String, known: [String] = []) -> StoreError {
        StoreError(code: .unknownField, message: "The collection '\(collection)' has no field '\(field)'\(NearMiss.hint(for: field, among: known)).")
    }

    static func typeMismatch(_ mismatch: FieldValue.Mismatch, in collection: String) -> StoreError {
        StoreError(code: .typeMismatch, message: "\(collection).\(mismatch.field): \(mismatch.message).")
    }

    static func notFound(_ collection: String, _ id: String) -> StoreError {
        StoreError(code: .recordNotFound, message: "No record \(id) in '\(collection)'.")
    }
}

extension ErrorCode {
    // Codes of the device's local store; the server never sends these.

    /// No record with this id (or it was deleted).
    public static let recordNotFound: ErrorCode = "record_not_found"
    /// A new record names no space and the store has no default space.
    public static let noSpace: ErrorCode = "no_space"
    /// A new record lacks a field the schema marks required.
    public static let missingField: ErrorCode = "missing_field"
    /// A pulled change names a collection or field the device's schema lacks: refresh the schema, then pull again.
    public static let schemaOutdated: ErrorCode = "schema_outdated"
    /// The store's database could not be opened, read or written.
    public static let storeFailed: ErrorCode = "store_failed"
    /// The store has no schema yet; fetch it from the server (`ferry sync`) first.
    public static let noSchema: ErrorCode = "no_schema"
}
