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

/// A live record as a table request reads it: its id and its space as the lowercase text both engines give them (a
/// reply shows them so; parsing them for every row was a tenth of a read), and its fields' values in the collection's
/// field order (`null` for a field never written). No clocks: a table shows values.
struct TableRecord: Sendable {
    var id: String
    var space: String
    var values: [JSONValue]

    /// The id and the space as UUIDs, for a write; `nil` for text that is not one (a row Ferry did not write).
    var ids: (id: UUID, space: UUID)? {
        guard let id = UUID(wireText: id), let space = UUID(wireText: space) else { return nil }
        return (id, space)
    }

    /// A row read with its `_sealed` column: in an end-to-end encrypted space the fields' ciphertexts are there, and
    /// they take their fields' places.
    init(id: String, space: String, values: [JSONValue], sealed: String?, in collection: CollectionDefinition) {
        (self.id, self.space, self.values) = (id, space, values)
        guard let sealed, case .object(let members)? = JSONValue(jsonText: sealed) else { return }
        for (name, value) in members {
            if let index = collection.fields.firstIndex(where: { $0.name == name }) { self.values[index] = value }
        }
    }
}

/// The records a selection found, in order, and the count of all it matches when asked.
struct SelectedRows: Sendable {
    var records: [TableRecord]
    var total: Int?
}

/// Reads for the table API, on either engine.
protocol TableStorage: Sendable {
    /// The live records `selection` picks (tombstones are no rows to a table request).
    func select(_ selection: RowSelection) async throws -> SelectedRows
    /// The spaces among `ids` that exist, with the role `owner`: what the service role may write to.
    func spaces(ids: [UUID]) async throws -> [SpaceSummary]
}
