import FerryCore

/// Why the server refused to start: a stable code and one line a person can act on.
public struct ServerStartupError: Error, Sendable, CustomStringConvertible {
    /// Stable codes, for scripts and tests.
    public enum Code: String, Sendable {
        case invalidSchema = "invalid_schema"
        case destructiveSchemaChange = "destructive_schema_change"
        case invalidDatabaseURL = "invalid_database_url"
        case databaseUnreachable = "database_unreachable"
        case databaseTooNew = "database_too_new"
        case dataDirectoryUnusable = "data_directory_unusable"
        case addressInUse = "address_in_use"
        case cannotListen = "cannot_listen"
        case invalidConfiguration = "invalid_configuration"
    }

    /// What went wrong, as a stable code.
    public var code: Code
    /// One line saying what went wrong and what to do.
    public var message: String

    /// Creates a start-up error.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// The message.
    public var description: String { message }

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
