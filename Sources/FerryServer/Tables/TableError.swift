import FerryCore
import Foundation

/// A refusal of a table request, in PostgREST's terms: its error code (PostgREST's `PGRST…` or PostgreSQL's
/// SQLSTATE, what supabase clients switch on), a message, and optional details and hint. The HTTP status comes from
/// `kind`, through the server's one table (`APIError.status(of:)`).
struct TableError: Error, Sendable, Hashable {
    var kind: ServiceError.Kind
    var code: String
    var message: String
    var details: String?
    var hint: String?

    init(_ kind: ServiceError.Kind, _ code: String, _ message: String, details: String? = nil, hint: String? = nil) {
        self.kind = kind
        self.code = code
        self.message = message
        self.details = details
        self.hint = hint
    }

    static func unknownTable(_ name: String) -> TableError {
        TableError(
            .notFound, "PGRST205", "Could not find the table 'public.\(name.prefix(64))' in the schema cache",
            hint: "The tables are the collections of the server's schema (ferry serve --schema)."
        )
    }

    static func unknownColumn(_ column: String, of collection: String) -> TableError {
        TableError(.invalidRequest, "42703", "column \(collection).\(column.prefix(64)) does not exist")
    }

    static func unknownWrittenColumn(_ column: String, of collection: String) -> TableError {
        TableError(.invalidRequest, "PGRST204", "Could not find the '\(column.prefix(64))' column of '\(collection)' in the schema cache")
    }

    static func unparsable(_ message: String, details: String? = nil) -> TableError {
        TableError(.invalidRequest, "PGRST100", message, details: details)
    }

    static func invalidValue(_ message: String) -> TableError {
        TableError(.invalidRequest, "22P02", message)
    }

    static func forbidden(_ message: String, hint: String? = nil) -> TableError {
        TableError(.forbidden, "42501", message, hint: hint)
    }
}
