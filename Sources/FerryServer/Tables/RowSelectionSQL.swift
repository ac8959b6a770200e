import FerryCore
import Foundation

/// Where an engine keeps a statement's bound values: each value appended, its placeholder returned.
protocol SQLParameters {
    var dialect: SQLDialect { get }
    /// Binds `value` (of a column of `type`) and returns its placeholder, cast where the engine needs one.
    mutating func bind(_ value: SQLValue, type: FieldType) -> String
}

/// The SQL of a ``RowSelection``, the same for both engines but for their spellings: every value a bound parameter,
/// every name a column the collection has.
enum RowSelectionSQL {
    /// The columns a table request may name, with the types their values are bound as.
    static func columnType(_ name: String, in collection: CollectionDefinition) throws(TableError) -> FieldType {
        if name == "id" || name == "_space" { return .uuid }
        guard let field = collection.field(named: name) else { throw .unknownColumn(name, of: collection.name) }
        guard !(collection.isEncrypted && collection.isSealed(field)) else {
            throw TableError(
                .invalidRequest, "42883",
                "\(collection.name).\(name) is end-to-end encrypted: the server holds only its ciphertext, so it cannot filter or order by it",
                hint: "Filter on id, _space or the parent link, and the rest on the device."
            )
        }
        return field.type
    }

    /// The `WHERE` condition: live records of the selection's spaces that pass its filter.
    static func condition(_ selection: RowSelection, _ parameters: inout some SQLParameters) throws(TableError) -> String {
        var terms = [parameters.dialect.liveRowCondition]
        if let spaces = selection.spaces {
            // Rows named by a list of ids (an embedded resource's, a write's) are found through that list's index. SQLite
            // without statistics prefers the space's index (every record of the space, then a sort); `+` keeps it off
            // that index, as SQLite documents. PostgreSQL keeps statistics and needs no hint.
            let space = parameters.dialect.quote("_space")
            let column = parameters.dialect == .sqlite && selection.filter?.listsIDs == true ? "+" + space : space
            terms.append(try membership(column, values: spaces.map { .string($0.lowercasedText) }, type: .uuid, &parameters))
        }
        if let filter = selection.filter {
            terms.append(try condition(filter, selection.collection, &parameters))
        }
        return terms.joined(separator: " AND ")
    }

    /// `ORDER BY …`, then the id so that pages never overlap.
    static func orderBy(_ selection: RowSelection, dialect: SQLDialect) throws(TableError) -> String {
        var terms: [String] = []
        for order in selection.order {
            // The console orders by when a record last changed; a table request names the collection's columns only.
            if !(selection.ordersBySyncColumns && RowSelection.syncOrderColumns.contains(order.column)) {
                _ = try columnType(order.column, in: selection.collection)
            }
            let nullsFirst = order.nullsFirst ?? order.descending
            terms.append("\(dialect.quote(order.column)) \(order.descending ? "DESC" : "ASC") NULLS \(nullsFirst ? "FIRST" : "LAST")")
        }
        terms.append("\"id\"")
        return "ORDER BY " + terms.joined(separator: ", ")
    }

    private static func condition(_ filter: RowFilter, _ collection: CollectionDefinition, _ parameters: inout some SQLParameters) throws(TableError) -> String {
        switch filter {
        case .all(let filters), .any(let filters):
            guard !filters.isEmpty else { return "1 = 1" }
            var parts: [String] = []
            for filter in filters { parts.append(try condition(filter, collection, &parameters)) }
            if case .all = filter { return "(" + parts.joined(separator: " AND ") + ")" }
            return "(" + parts.joined(separator: " OR ") + ")"
        case .not(let inner):
            return "NOT (\(try condition(inner, collection, &parameters)))"
        case .isValue(let column, let value):
            let type = try columnType(column, in: collection)
            let quoted = parameters.dialect.quote(column)
            switch value {
            case .null, .unknown: return "\(quoted) IS NULL"
            case .notNull: return "\(quoted) IS NOT NULL"
            case .true, .false:
                guard type == .bool else {
                    throw .invalidValue("is.\(value.rawValue) compares a boolean, and \(collection.name).\(column) is \(type.rawValue)")
                }
                return "\(quoted) IS \(value == .true ? "TRUE" : "FALSE")"
            }
        case .ids(let column, let ids):
            guard try columnType(column, in: collection) == .uuid, !ids.isEmpty else { return "1 = 0" }
            // Text on both engines; PostgreSQL casts it to uuid once per placeholder.
            let cast = parameters.dialect == .postgres ? "::uuid" : ""
            let placeholders = ids.map { parameters.bind(.text($0), type: .text) + cast }
            return "\(parameters.dialect.quote(column)) IN (\(placeholders.joined(separator: ", ")))"
        case .oneOf(let column, let texts):
            let type = try comparableType(column, collection)
            var values: [JSONValue] = []
            for text in texts { values.append(try value(text, type: type, column: column)) }
            return try membership(parameters.dialect.quote(column), values: values, type: type, &parameters)
        case .compare(let column, let op, let text):
            let type = try comparableType(column, collection)
            let quoted = parameters.dialect.quote(column)
            if let sql = op.sql {
                let bound = try bind(value(text, type: type, column: column), type: type, &parameters)
                return "\(quoted) \(sql) \(bound)"
            }
            guard type == .text else {
                throw TableError(.invalidRequest, "42883", "\(op.rawValue) matches text, and \(collection.name).\(column) is \(type.rawValue)")
            }
            // PostgREST lets `*` stand for `%`, which a URL would otherwise have to escape.
            let pattern = text.replacingOccurrences(of: "*", with: "%")
            switch (parameters.dialect, op) {
            case (.postgres, .like): return "\(quoted) LIKE \(parameters.bind(.text(pattern), type: .text))"
            case (.postgres, _): return "\(quoted) ILIKE \(parameters.bind(.text(pattern), type: .text))"
            // SQLite's LIKE ignores ASCII case, as ILIKE does; GLOB is its case-sensitive match.
            case (.sqlite, .like): return "\(quoted) GLOB \(parameters.bind(.text(glob(fromLike: pattern)), type: .text))"
            case (.sqlite, _): return "\(quoted) LIKE \(parameters.bind(.text(pattern), type: .text)) ESCAPE '\\'"
            }
        }
    }

    /// A column whose values compare as SQL values: JSON, blob references and bytes have no order a request can rely on
    /// across engines (`jsonb` and text compare differently), so only `is` tests them.
    private static func comparableType(_ column: String, _ collection: CollectionDefinition) throws(TableError) -> FieldType {
        let type = try columnType(column, in: collection)
        guard ![.json, .blob, .bytes].contains(type) else {
            throw TableError(
                .invalidRequest, "42883", "\(collection.name).\(column) is \(type.rawValue), which filters compare only with is.null",
                hint: "Filter on another column, or read the rows and compare on the client."
            )
        }
        return type
    }

    /// The request's text of a filter value, read as a value of the column's type.
    static func value(_ text: String, type: FieldType, column: String) throws(TableError) -> JSONValue {
        switch type {
        case .integer, .real:
            guard let number = Double(text), number.isFinite else {
                throw .invalidValue("invalid input syntax for type \(type == .integer ? "bigint" : "double precision"): \"\(text.prefix(40))\"")
            }
            return .number(number)
        case .bool:
            switch text.lowercased() {
            case "true", "t", "yes", "on", "1": return .bool(true)
            case "false", "f", "no", "off", "0": return .bool(false)
            default: throw .invalidValue("invalid input syntax for type boolean: \"\(text.prefix(40))\"")
            }
        case .timestamp:
            return .string(Timestamp.readingBareDate(text))
        default:
            return .string(text)
        }
    }

    private static func bind(_ value: JSONValue, type: FieldType, _ parameters: inout some SQLParameters) throws(TableError) -> String {
        do {
            return parameters.bind(try parameters.dialect.columnValue(value, type: type), type: type)
        } catch {
            throw .invalidValue("invalid input syntax: \(error.description)")
        }
    }

    /// `column IN (values)`, `column` as the SQL writes it (quoted).
    private static func membership(
        _ column: String, values: [JSONValue], type: FieldType, _ parameters: inout some SQLParameters
    ) throws(TableError) -> String {
        var placeholders: [String] = []
        for value in values { placeholders.append(try bind(value, type: type, &parameters)) }
        guard !placeholders.isEmpty else { return "1 = 0" }
        return "\(column) IN (\(placeholders.joined(separator: ", ")))"
    }

    /// A LIKE pattern (`%`, `_`, `\` escaping) as the GLOB pattern that matches the same text, case-sensitively.
    static func glob(fromLike pattern: String) -> String {
        var glob = ""
        var escaped = false
        for character in pattern {
            switch (escaped, character) {
            case (false, "\\"): escaped = true; continue
            case (false, "%"): glob.append("*")
            case (false, "_"): glob.append("?")
            case (_, "*"): glob.append("[*]")
            case (_, "?"): glob.append("[?]")
            case (_, "["): glob.append("[[]")
            default: glob.append(character)
            }
            escaped = false
        }
        return glob
    }
}
