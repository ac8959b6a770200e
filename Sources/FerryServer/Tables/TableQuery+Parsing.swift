import FerryCore
import Foundation

extension TableQuery {
    /// Reads PostgREST's query parameters, in order: `select`, `order`, `limit`, `offset`, `on_conflict`, `columns`,
    /// `or`/`and` (with `not.`), and `column=operator.value` filters; each of the last five prefixed by an embedded
    /// resource's path (`notes.order=…`, `notes.text=eq.…`) applies to that resource.
    init(parameters: [(key: String, value: String)]) throws(TableError) {
        self.init()
        for (key, value) in parameters {
            switch key {
            case "select": select = try SelectListParser.parse(value)
            case "on_conflict": onConflict = try Self.names(value, of: key)
            case "columns": columns = try Self.names(value, of: key)
            default: try apply(key, value)
            }
        }
        let terms = (filters + embedded.values.flatMap(\.filters)).reduce(0) { $0 + $1.size }
        guard terms <= Self.maximumTerms else {
            throw .unparsable("A request may hold at most \(Self.maximumTerms) filter conditions and listed values; this one holds \(terms)")
        }
        let embeds = select.reduce(0) { $0 + $1.embedCount }
        guard embeds <= SelectListParser.maximumEmbeds else {
            throw .unparsable("A select may embed at most \(SelectListParser.maximumEmbeds) resources; this one embeds \(embeds)")
        }
    }

    /// The most conditions and `in` values one request may filter by, over every resource: a bound on the SQL a
    /// request makes (and below each engine's limits on terms and parameters).
    static let maximumTerms = 1000

    private mutating func apply(_ key: String, _ value: String) throws(TableError) {
        let logical = ["or", "and", "not.or", "not.and"]
        var path = key.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        var name = path.removeLast()
        if path.last == "not", logical.contains("not." + name) {
            path.removeLast()
            name = "not." + name
        }
        let embeddedPath = path.joined(separator: ".")
        var options = embeddedPath.isEmpty
            ? EmbeddedOptions(filters: filters, order: order, limit: limit, offset: offset) : embedded[embeddedPath, default: EmbeddedOptions()]
        switch name {
        case "order": options.order = try Self.order(value)
        case "limit": options.limit = try Self.count(value, of: key)
        case "offset": options.offset = try Self.count(value, of: key)
        case _ where logical.contains(name):
            let negated = name.hasPrefix("not.")
            let tree = try FilterTreeParser.parse(group: value, conjunction: name.hasSuffix("and"))
            options.filters.append(negated ? .not(tree) : tree)
        default:
            guard Self.isColumnName(name) else { throw .unparsable("\"\(key.prefix(64))\" is not a column or a query parameter") }
            options.filters.append(try FilterTreeParser.filter(column: name, expression: value))
        }
        if embeddedPath.isEmpty {
            (filters, order, limit, offset) = (options.filters, options.order, options.limit, options.offset)
        } else {
            embedded[embeddedPath] = options
        }
    }

    static func isColumnName(_ name: String) -> Bool {
        guard let first = name.utf8.first, first == UInt8(ascii: "_") || (first >= 97 && first <= 122), name.utf8.count <= 63 else { return false }
        return name.utf8.allSatisfy { ($0 >= 97 && $0 <= 122) || ($0 >= 48 && $0 <= 57) || $0 == UInt8(ascii: "_") }
    }

    private static func names(_ value: String, of key: String) throws(TableError) -> [String] {
        let names = value.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).replacingOccurrences(of: "\"", with: "") }
        guard !names.isEmpty, names.allSatisfy(isColumnName) else { throw .unparsable("\(key) must list column names separated by commas") }
        return names
    }

    /// A limit or an offset, at most ``maximumCount``: no arithmetic on it can overflow, and a larger number (one past
    /// `Int` included) means the same.
    private static func count(_ value: String, of key: String) throws(TableError) -> Int {
        if let number = Int(value), number >= 0 { return min(number, maximumCount) }
        guard !value.isEmpty, value.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) else {
            throw .unparsable("\(key) must be a whole number of at least 0, not \"\(value.prefix(20))\"")
        }
        return maximumCount
    }

    /// The largest limit or offset a request means: more rows than any table holds.
    static let maximumCount = Int(Int32.max)

    /// `order=column[.asc|.desc][.nullsfirst|.nullslast],…`.
    static func order(_ value: String) throws(TableError) -> [RowOrder] {
        var terms: [RowOrder] = []
        for term in value.split(separator: ",", omittingEmptySubsequences: false) {
            let parts = term.trimmingCharacters(in: .whitespaces).split(separator: ".", omittingEmptySubsequences: false).map(String.init)
            guard let column = parts.first, isColumnName(column), parts.count <= 3 else {
                throw .unparsable("order must list column[.asc|.desc][.nullsfirst|.nullslast] terms, not \"\(term.prefix(64))\"")
            }
            var order = RowOrder(column: column)
            for modifier in parts.dropFirst() {
                switch modifier {
                case "asc": order.descending = false
                case "desc": order.descending = true
                case "nullsfirst": order.nullsFirst = true
                case "nullslast": order.nullsFirst = false
                default: throw .unparsable("\"\(modifier.prefix(20))\" is not asc, desc, nullsfirst or nullslast")
                }
            }
            terms.append(order)
        }
        return terms
    }
}

/// PostgREST's filter expressions: `operator.value`, `not.operator.value`, and `or=(…)`/`and=(…)` trees whose items
/// are `column.operator.value`, nested `and(…)`/`or(…)`, each optionally `not.`; values may be double-quoted.
enum FilterTreeParser {
    /// The most filters one tree may hold: a bound on the SQL a request can make.
    static let maximumItems = 100

    /// A `column=expression` filter.
    static func filter(column: String, expression: String) throws(TableError) -> RowFilter {
        var rest = Substring(expression)
        var negated = false
        if rest.hasPrefix("not.") {
            negated = true
            rest = rest.dropFirst(4)
        }
        guard let dot = rest.firstIndex(of: ".") else {
            throw .unparsable("\"\(column)=\(expression.prefix(40))\" is no filter: write operator.value, such as eq.5")
        }
        let op = String(rest[..<dot])
        let value = String(rest[rest.index(after: dot)...])
        let filter: RowFilter
        switch op {
        case "in":
            guard value.hasPrefix("("), value.hasSuffix(")") else { throw .unparsable("in takes a list in parentheses: in.(a,b)") }
            filter = .oneOf(column, try items(value.dropFirst().dropLast()).map(unquoted))
        case "is":
            guard let test = RowFilter.IsValue(rawValue: value.lowercased()) else {
                throw .unparsable("is takes null, not_null, true, false or unknown, not \"\(value.prefix(20))\"")
            }
            filter = .isValue(column, test)
        default:
            guard let comparison = RowFilter.ComparisonOperator(rawValue: op) else {
                throw .unparsable(
                    "\"\(op.prefix(20))\" is not an operator this server supports",
                    details: "Supported: eq, neq, gt, gte, lt, lte, like, ilike, in, is, with not. before any."
                )
            }
            filter = .compare(column, comparison, unquoted(value))
        }
        return negated ? .not(filter) : filter
    }

    /// The value of `or=`/`and=`: `(item,item,…)`.
    static func parse(group: String, conjunction: Bool) throws(TableError) -> RowFilter {
        var count = 0
        return try tree(Substring(group), conjunction: conjunction, count: &count)
    }

    private static func tree(_ text: Substring, conjunction: Bool, count: inout Int) throws(TableError) -> RowFilter {
        guard text.hasPrefix("("), text.hasSuffix(")") else { throw .unparsable("or and and take their conditions in parentheses: or=(a.eq.1,b.eq.2)") }
        var filters: [RowFilter] = []
        for item in try items(text.dropFirst().dropLast()) {
            count += 1
            guard count <= maximumItems else { throw .unparsable("a filter tree may hold at most \(maximumItems) conditions") }
            filters.append(try node(item, count: &count))
        }
        return conjunction ? .all(filters) : .any(filters)
    }

    private static func node(_ item: Substring, count: inout Int) throws(TableError) -> RowFilter {
        var rest = item
        var negated = false
        if rest.hasPrefix("not.") {
            negated = true
            rest = rest.dropFirst(4)
        }
        for (prefix, conjunction) in [("and(", true), ("or(", false)] where rest.hasPrefix(prefix) {
            let tree = try tree(rest.dropFirst(prefix.count - 1), conjunction: conjunction, count: &count)
            return negated ? .not(tree) : tree
        }
        guard let dot = item.firstIndex(of: ".") else { throw .unparsable("\"\(item.prefix(40))\" is no condition: write column.operator.value") }
        let column = String(item[..<dot])
        guard TableQuery.isColumnName(column) else { throw .unparsable("\"\(column.prefix(64))\" is not a column name") }
        return try filter(column: column, expression: String(item[item.index(after: dot)...]))
    }

    /// Splits at the commas outside parentheses and double quotes.
    static func items(_ text: Substring) throws(TableError) -> [Substring] {
        var items: [Substring] = []
        var depth = 0
        var quoted = false
        var escaped = false
        var start = text.startIndex
        for index in text.indices {
            let character = text[index]
            if escaped { escaped = false; continue }
            switch character {
            case "\\" where quoted: escaped = true
            case "\"": quoted.toggle()
            case "(" where !quoted: depth += 1
            case ")" where !quoted:
                depth -= 1
                guard depth >= 0 else { throw .unparsable("unbalanced parentheses in \"\(text.prefix(40))\"") }
            case "," where !quoted && depth == 0:
                items.append(text[start..<index])
                start = text.index(after: index)
            default: break
            }
        }
        guard depth == 0, !quoted else { throw .unparsable("unbalanced parentheses or quotes in \"\(text.prefix(40))\"") }
        if !text.isEmpty { items.append(text[start...]) }
        return items
    }

    /// A value without its double quotes and backslash escapes.
    static func unquoted(_ text: some StringProtocol) -> String {
        guard text.count >= 2, text.hasPrefix("\""), text.hasSuffix("\"") else { return String(text) }
        var value = ""
        var escaped = false
        for character in text.dropFirst().dropLast() {
            if !escaped, character == "\\" { escaped = true; continue }
            value.append(character)
            escaped = false
        }
        return value
    }
}

/// `select=` lists: `*`, `column`, `alias:column`, `resource(…)`, `alias:resource(…)`, nested; spaces ignored.
enum SelectListParser {
    /// How deep embedded resources may nest.
    static let maximumDepth = 3
    /// How many embedded resources one select may name, at every depth: each is a query.
    static let maximumEmbeds = 16

    static func parse(_ text: String) throws(TableError) -> [SelectItem] {
        try list(Substring(text.filter { !$0.isWhitespace }), depth: 0)
    }

    private static func list(_ text: Substring, depth: Int) throws(TableError) -> [SelectItem] {
        guard !text.isEmpty else { return [.all] }
        var items: [SelectItem] = []
        for item in try FilterTreeParser.items(text) {
            items.append(try self.item(item, depth: depth))
        }
        return items
    }

    private static func item(_ text: Substring, depth: Int) throws(TableError) -> SelectItem {
        if text == "*" { return .all }
        var rest = text
        var alias: String?
        if let colon = rest.firstIndex(of: ":"), rest[rest.index(after: colon)...].first != ":",
           rest.firstIndex(of: "(").map({ colon < $0 }) ?? true {
            alias = String(rest[..<colon])
            rest = rest[rest.index(after: colon)...]
            guard TableQuery.isColumnName(alias!) || !alias!.isEmpty && alias!.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" }) else {
                throw .unparsable("\"\(alias!.prefix(64))\" is not a name an alias can take")
            }
        }
        if let open = rest.firstIndex(of: "(") {
            guard rest.hasSuffix(")") else { throw .unparsable("an embedded resource ends with ): \"\(text.prefix(64))\"") }
            guard depth < maximumDepth else { throw .unparsable("embedded resources nest at most \(maximumDepth) deep") }
            var name = rest[..<open]
            if let bang = name.firstIndex(of: "!") {
                let hint = name[name.index(after: bang)...]
                guard hint != "inner" else {
                    throw .unparsable("!inner embedding is not supported", details: "Filter the parents first, or read the children with their own filter.")
                }
                name = name[..<bang]
            }
            guard TableQuery.isColumnName(String(name)) else { throw .unparsable("\"\(name.prefix(64))\" is not a table name") }
            let inner = rest[rest.index(after: open)..<rest.index(before: rest.endIndex)]
            return .embed(String(name), alias: alias, items: try list(inner, depth: depth + 1))
        }
        guard !rest.contains("::"), !rest.contains("->") else {
            throw .unparsable("casts (::) and JSON paths (->) in select are not supported: \"\(text.prefix(64))\"")
        }
        guard TableQuery.isColumnName(String(rest)) else { throw .unparsable("\"\(rest.prefix(64))\" is not a column name") }
        return .column(String(rest), alias: alias)
    }
}
