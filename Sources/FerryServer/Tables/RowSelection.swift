import FerryCore
import Foundation

/// Which live records of one collection a table request reads: the engine-agnostic query every storage runs the same
/// way (``TableStorage``), its filters bound as values, never spliced into SQL.
struct RowSelection: Sendable {
    var collection: CollectionDefinition
    /// The spaces to read; `nil` reads every space (the service role).
    var spaces: [UUID]?
    var filter: RowFilter?
    var order: [RowOrder] = []
    var limit: Int
    var offset = 0
    /// Whether to count every record the selection matches, beyond the page.
    var countsAll = false
    /// Whether `order` may name the sync columns of ``syncOrderColumns`` (the console's lists; never a table request).
    var ordersBySyncColumns = false

    static let syncOrderColumns: Set<String> = ["_seq", SQLDialect.updatedAtColumn]
}

/// A condition on a record's columns, as PostgREST's filters spell them.
indirect enum RowFilter: Sendable, Hashable {
    /// `column op value`: the value as the request wrote it, read as the column's type when bound.
    case compare(String, ComparisonOperator, String)
    /// `column IN (values)`.
    case oneOf(String, [String])
    /// `column IN (ids)`: a uuid column among ids in their lowercase text (records already read: an embedded
    /// resource's links), bound as they are.
    case ids(String, [String])
    /// `column IS NULL | TRUE | FALSE`; `NOT NULL` is `.not(.isValue(column, .null))`.
    case isValue(String, IsValue)
    case all([RowFilter])
    case any([RowFilter])
    case not(RowFilter)

    enum ComparisonOperator: String, Sendable, Hashable, CaseIterable {
        case eq, neq, gt, gte, lt, lte, like, ilike

        /// The SQL operator, for those that are one.
        var sql: String? {
            switch self {
            case .eq: "="
            case .neq: "<>"
            case .gt: ">"
            case .gte: ">="
            case .lt: "<"
            case .lte: "<="
            case .like, .ilike: nil
            }
        }
    }

    enum IsValue: String, Sendable, Hashable {
        case null, notNull = "not_null", `true`, `false`, unknown
    }

    /// Whether the filter requires a listed id (``ids(_:_:)`` alone or among all of its conditions): the rows are then
    /// few and found by that list.
    var listsIDs: Bool {
        switch self {
        case .ids: true
        case .all(let filters): filters.contains(where: \.listsIDs)
        default: false
        }
    }

    /// How many conditions and listed values the filter holds: what its SQL grows with.
    var size: Int {
        switch self {
        case .compare, .isValue: 1
        case .oneOf(_, let values): max(1, values.count)
        case .ids(_, let ids): max(1, ids.count)
        case .all(let filters), .any(let filters): filters.reduce(1) { $0 + $1.size }
        case .not(let filter): filter.size
        }
    }
}

/// One `ORDER BY` term.
struct RowOrder: Sendable, Hashable {
    var column: String
    var descending = false
    /// `nil`: PostgreSQL's default (nulls last ascending, first descending), which SQLite is told explicitly.
    var nullsFirst: Bool?
}

/// Live records as a table request reads them: each one's id, space and fields already the JSON text a reply shows
/// (`"…"`, `12`, `null`), back to back in one buffer, so rendering copies each value once and builds no value per
/// cell; the few readers that need values (a write's targets, the console) parse the cells they read. Ids and spaces
/// are the lowercase text both engines give. No clocks: a table shows values.
struct TableRecords: Sendable {
    /// Cells per record: the id, the space, then the collection's fields in order.
    let width: Int
    private(set) var text: [UInt8] = []
    /// Where each cell ends in `text`; the next starts there.
    private(set) var ends: [Int] = []

    init(fieldCount: Int) {
        width = fieldCount + 2
    }

    var count: Int { ends.count / width }
    var indices: Range<Int> { 0..<count }
    var isEmpty: Bool { ends.isEmpty }

    /// Cell `column` of `record`: 0 the id, 1 the space, 2 onwards the fields.
    func cell(_ record: Int, _ column: Int) -> ArraySlice<UInt8> {
        let index = record * width + column
        return text[(index == 0 ? 0 : ends[index - 1])..<ends[index]]
    }

    /// The JSON text of field `field` of `record`.
    func field(_ record: Int, _ field: Int) -> ArraySlice<UInt8> {
        cell(record, 2 + field)
    }

    func id(_ record: Int) -> String { string(cell(record, 0)) ?? "" }
    func space(_ record: Int) -> String { string(cell(record, 1)) ?? "" }

    /// The id and the space as UUIDs, for a write; `nil` for text that is not one (a row Ferry did not write).
    func ids(_ record: Int) -> (id: UUID, space: UUID)? {
        guard let id = UUID(wireText: id(record)), let space = UUID(wireText: space(record)) else { return nil }
        return (id, space)
    }

    /// The id a link field holds, in the lowercase text ids are compared in; `nil` when it holds none.
    func link(_ record: Int, _ field: Int) -> String? {
        string(self.field(record, field))
    }

    /// The fields of `record` as values, in the collection's order.
    func values(_ record: Int) -> [JSONValue] {
        (0..<(width - 2)).map { (try? JSONValue(parsing: field(record, $0))) ?? .null }
    }

    /// The records at `indices`, in that order.
    func selecting(_ indices: [Int]) -> TableRecords {
        var selected = TableRecords(fieldCount: width - 2)
        for record in indices {
            for column in 0..<width { selected.appendCell { $0.append(contentsOf: cell(record, column)) } }
        }
        return selected
    }

    /// Appends one cell, written by `write`: an engine's reader calls this for the id, the space, then
    /// ``appendFields(of:sealed:_:)``.
    mutating func appendCell(_ write: (inout [UInt8]) -> Void) {
        write(&text)
        ends.append(text.count)
    }

    /// Appends a record's field cells: each one written by `writeField(index, &json)`, unless the row's `_sealed`
    /// column holds that field's ciphertext (an end-to-end encrypted space), which then takes its place.
    mutating func appendFields(of collection: CollectionDefinition, sealed: String?, _ writeField: (Int, inout [UInt8]) -> Void) {
        var ciphertexts: [String: JSONValue] = [:]
        if let sealed, case .object(let members)? = JSONValue(jsonText: sealed) { ciphertexts = members }
        for (index, field) in collection.fields.enumerated() {
            if let ciphertext = ciphertexts[field.name] {
                appendCell { ciphertext.write(into: &$0) }
            } else {
                appendCell { writeField(index, &$0) }
            }
        }
    }

    /// A JSON string cell's text (most need no unescaping); `nil` for another value.
    private func string(_ cell: ArraySlice<UInt8>) -> String? {
        guard cell.first == UInt8(ascii: "\""), cell.count >= 2 else { return nil }
        guard cell.contains(UInt8(ascii: "\\")) else { return String(decoding: cell.dropFirst().dropLast(), as: UTF8.self) }
        return (try? JSONValue(parsing: cell))?.stringValue
    }
}

/// The records a selection found, in order, and the count of all it matches when asked.
struct SelectedRows: Sendable {
    var records: TableRecords
    var total: Int?
}

/// Reads for the table API, on either engine.
protocol TableStorage: Sendable {
    /// The live records `selection` picks (tombstones are no rows to a table request).
    func select(_ selection: RowSelection) async throws -> SelectedRows
    /// The spaces among `ids` that exist, with the role `owner`: what the service role may write to.
    func spaces(ids: [UUID]) async throws -> [SpaceSummary]
}
