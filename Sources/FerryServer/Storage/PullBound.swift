import FerryCore

/// Where a pull page of a space ends when the schema has several collections.
///
/// A page holds the `limit` changes after the cursor across every collection, in sequence order. Reading `limit + 1`
/// rows of each collection and keeping the first `limit + 1` of them read and decoded up to one page per collection
/// (four times the page for the sermon app's schema). This query finds the sequence number of the `(limit + 1)`-th change
/// from the `(_space, _seq)` indexes alone, and each collection then reads only its rows up to that number.
enum PullBound {
    /// The query, whose one row (absent when fewer changes wait) is the bound. `space`, `cursor` and `take` are the
    /// placeholders for the space, the cursor and `limit + 1`; `skip` for `limit`.
    static func sql(_ schema: Schema, _ dialect: SQLDialect, space: String, cursor: String, take: String, skip: String) -> String {
        let scans = schema.collections.map { collection in
            "SELECT * FROM (SELECT _seq FROM \(dialect.quote(collection.name)) WHERE _space = \(space) AND _seq > \(cursor) ORDER BY _seq LIMIT \(take)) AS \(dialect.quote("_" + collection.name))"
        }
        return "SELECT _seq FROM (\(scans.joined(separator: " UNION ALL "))) AS _scans ORDER BY _seq LIMIT 1 OFFSET \(skip)"
    }

    /// The condition and the bound's place in it for reading one collection's part of the page.
    static func condition(bounded: Bool, upper: String) -> String {
        bounded ? " AND _seq <= \(upper)" : ""
    }
}
