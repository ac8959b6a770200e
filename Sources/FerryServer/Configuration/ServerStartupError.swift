import FerryCore

/// Why the server refused to start: a stable code and one line a person can act on.
public struct ServerStartupError: FerryError {
    /// Stable codes (``ErrorCode``s declared below), for scripts and tests.
    public typealias Code = ErrorCode

    /// What went wrong, as a stable code.
    public var code: Code
    /// One line saying what went wrong and what to do.
    public var message: String

    /// Creates a start-up error.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    static func invalidDatabaseURL(_ message: String) -> Self { .init(.invalidDatabaseURL, message) }
    static func invalidSchema(_ error: SchemaError) -> Self { .init(.invalidSchema, "invalid schema: \(error)") }
    static func destructive(_ error: DestructiveSchemaChangeError) -> Self {
        .init(
            .destructiveSchemaChange,
            error.description + ". Nothing was changed. To serve this schema, start with a fresh --data-dir (or database), or make the "
                + "change additive: keep the field or collection in the schema and stop using it (docs/schema-evolution.md)"
        )
    }
}

extension ErrorCode {
    /// `--database-url` is not a PostgreSQL URL Ferry can use.
    public static let invalidDatabaseURL: ErrorCode = "invalid_database_url"
    /// The database cannot be reached or prepared.
    public static let databaseUnreachable: ErrorCode = "database_unreachable"
    /// The database was migrated by a newer Ferry.
    public static let databaseTooNew: ErrorCode = "database_too_new"
    /// The data folder cannot be created, read or written.
    public static let dataDirectoryUnusable: ErrorCode = "data_directory_unusable"
    /// Another process listens on the address.
    public static let addressInUse: ErrorCode = "address_in_use"
    /// The address cannot be listened on (not this host's, or a privileged port).
    public static let cannotListen: ErrorCode = "cannot_listen"
    /// A flag or variable has a value the server cannot use.
    public static let invalidConfiguration: ErrorCode = "invalid_configuration"
    /// The blob folder (`--blob-dir`, or none) is not where this PostgreSQL database keeps its blobs.
    public static let blobLocationMismatch: ErrorCode = "blob_location_mismatch"
    /// The SMTP URL for outgoing mail is not one Ferry can use.
    public static let invalidSMTPURL: ErrorCode = "invalid_smtp_url"
}
