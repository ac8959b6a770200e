/// Rules for the names of collections and fields, which become SQL identifiers.
public enum Identifier {
    /// Columns every collection table has; a schema may not declare fields with these names.
    public static let reservedColumns = Set(SQLDialect.syncColumns + [SQLDialect.updatedAtColumn, SQLDialect.sealedColumn])

    /// The longest name PostgreSQL keeps without truncating (63 bytes).
    public static let maximumLength = 63

    /// Why `name` cannot be used as a collection or field name, or `nil` when it can.
    ///
    /// Names are lowercase ASCII letters, digits and underscores, starting with a letter,
    /// so they are the same identifier on SQLite, PostgreSQL and in Swift code.
    public static func problem(with name: String) -> String? {
        guard !name.isEmpty else { return "a name cannot be empty" }
        guard name.utf8.count <= maximumLength else {
            return "'\(name)' is longer than \(maximumLength) characters"
        }
        let bytes = Array(name.utf8)
        guard bytes[0] >= UInt8(ascii: "a") && bytes[0] <= UInt8(ascii: "z") else {
            return "'\(name)' must start with a lowercase letter"
        }
        let allowed = bytes.allSatisfy { byte in
            (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z"))
                || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9"))
                || byte == UInt8(ascii: "_")
        }
        guard allowed else {
            return "'\(name)' may contain only lowercase letters, digits and underscores"
        }
        return nil
    }
}
