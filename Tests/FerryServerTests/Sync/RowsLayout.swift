import FerryCore
import Foundation

/// Reads a pull reply in the rows layout as a client that asked for it would: each row becomes the object the
/// changes layout has for it, and the reply is then read by the message's one reader. An oracle written apart from
/// the server's `ChangeRowWriter`, so the tests check the writer against the documented layout (docs/sync.md).
enum RowsLayout {
    /// The columns every page starts with, before the collection's fields.
    static let syncColumns = ["id", "seq", "deleted", "clock", "clocks"]

    static func read(_ bytes: some Collection<UInt8>) throws -> PullResponse {
        guard var reply = try JSONValue(parsing: bytes).objectValue, let pages = reply.removeValue(forKey: "pages")?.arrayValue else {
            throw refused("a reply in the rows layout has pages")
        }
        var changes: [JSONValue] = []
        for page in pages {
            guard let page = page.objectValue, let space = page["space"], let collection = page["collection"],
                  let columns = page["columns"]?.arrayValue?.compactMap(\.stringValue), let rows = page["rows"]?.arrayValue
            else { throw refused("a page has space, collection, columns (names) and rows") }
            guard columns.starts(with: syncColumns), Set(columns).count == columns.count else {
                throw refused("columns are \(syncColumns.joined(separator: ", ")), then distinct field names")
            }
            for row in rows {
                guard let values = row.arrayValue, values.count == columns.count else { throw refused("a row has a value per column") }
                // A field without a value is in the change only when its clock is listed (it was cleared).
                let named = values[4].objectValue ?? [:]
                var fields: [String: JSONValue] = [:]
                for index in syncColumns.count..<columns.count where !values[index].isNull || named[columns[index]] != nil {
                    fields[columns[index]] = values[index]
                }
                changes.append(.object([
                    "space": space, "collection": collection, "id": values[0], "seq": values[1], "deleted": values[2],
                    "clock": values[3], "clocks": values[4], "fields": .object(fields),
                ]))
            }
        }
        reply["changes"] = .array(changes)
        var text: [UInt8] = []
        JSONValue.object(reply).write(into: &text)
        return try JSONValueDecoder().decode(PullResponse.self, from: text)
    }

    private static func refused(_ rule: String) -> DecodingError {
        .dataCorrupted(.init(codingPath: [], debugDescription: "Not the rows layout: \(rule)."))
    }
}
