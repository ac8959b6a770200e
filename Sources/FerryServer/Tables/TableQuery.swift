import FerryCore
import Foundation

/// A table request's query, as PostgREST's URL spells it (parsed by ``TableQuery/init(parameters:)``): what to
/// select and embed, which rows, in which order, and the options of each embedded resource.
struct TableQuery: Sendable, Hashable {
    /// `select=`: `*` when absent.
    var select: [SelectItem] = [.all]
    /// The top-level filters, all of which must hold.
    var filters: [RowFilter] = []
    var order: [RowOrder] = []
    var limit: Int?
    var offset: Int?
    /// `on_conflict=`: the columns of the unique key an upsert merges on.
    var onConflict: [String]?
    /// `columns=`: the body's keys a write takes (others are ignored).
    var columns: [String]?
    /// Filters, order and paging of embedded resources, by their path (`notes`, `notes.items`).
    var embedded: [String: EmbeddedOptions] = [:]

    /// What an embedded resource's rows are cut to.
    struct EmbeddedOptions: Sendable, Hashable {
        var filters: [RowFilter] = []
        var order: [RowOrder] = []
        var limit: Int?
        var offset: Int?
    }

    /// The filter of the top level, or `nil` for all rows.
    var filter: RowFilter? { filters.isEmpty ? nil : .all(filters) }
}

/// One item of a `select=` list.
indirect enum SelectItem: Sendable, Hashable {
    /// `*`: the id, the space and every field.
    case all
    /// `column` or `alias:column`.
    case column(String, alias: String?)
    /// `resource(items)` or `alias:resource(items)`: a parent or the children, through the schema's `parent` links.
    case embed(String, alias: String?, items: [SelectItem])

    /// The embedded resources this item names, nested ones included.
    var embedCount: Int {
        guard case .embed(_, _, let items) = self else { return 0 }
        return 1 + items.reduce(0) { $0 + $1.embedCount }
    }
}
