/// A problem in a schema file: which file, where inside it, and what is wrong.
public struct SchemaError: FerryError, Hashable {
    /// The schema file's path as given.
    public var file: String
    /// The 1-based line in the file, when known.
    public var line: Int?
    /// The dotted path inside the document, e.g. `collections.notes.fields.body`.
    public var path: String
    /// What is wrong, in words a person can act on.
    public var message: String

    /// Creates a schema error.
    public init(file: String, line: Int? = nil, path: String, message: String) {
        self.file = file
        self.line = line
        self.path = path
        self.message = message
    }

    /// Always `invalid_schema`; the file, line and path say where.
    public var code: ErrorCode { .invalidSchema }

    /// `file:line: path: message`, one line.
    public var description: String {
        let location = line.map { "\(file):\($0)" } ?? file
        return path.isEmpty ? "\(location): \(message)" : "\(location): \(path): \(message)"
    }
}

extension ErrorCode {
    /// A schema file is missing, unreadable or invalid.
    public static let invalidSchema: ErrorCode = "invalid_schema"
    /// The schema would drop or retype what synced devices hold.
    public static let destructiveSchemaChange: ErrorCode = "destructive_schema_change"
}
