import FerryCore
import Foundation

/// The server's reply to a pull: a ``PullResponse`` whose changes were written into JSON as the store read them
/// (``WireChange``), so they go out without being built as ``Change`` values and written again.
struct PullReply: Sendable, JSONTextWritable {
    var layout: PullLayout = .changes
    var changes: [WireChange] = []
    var cursors: [UUID: Int64] = [:]
    var hasMore = false
    var resetRequired: [UUID] = []
    var keyVersions: [UUID: Int] = [:]
    /// Each collection's row columns, for the rows layout's pages (``ChangeRowWriter/rowColumns``).
    var rowColumns: [String: [String]] = [:]

    var approximateJSONByteCount: Int {
        changes.reduce(256 + 64 * (cursors.count + keyVersions.count + resetRequired.count)) { $0 + $1.json.count + 1 }
    }

    func writeJSON(into bytes: inout [UInt8]) {
        PullResponse.writeJSON(
            into: &bytes, layout: layout, cursors: cursors, hasMore: hasMore, keyVersions: keyVersions, resetRequired: resetRequired
        ) { bytes in
            switch layout {
            case .changes:
                for (index, change) in changes.enumerated() {
                    if index > 0 { bytes.append(UInt8(ascii: ",")) }
                    bytes.append(contentsOf: change.json)
                }
            case .rows: writePages(into: &bytes)
            }
        }
    }

    /// One page per run of changes of one space and collection, in the changes' order.
    private func writePages(into bytes: inout [UInt8]) {
        var page: (space: UUID, collection: String)?
        for change in changes {
            if let page, page.space == change.space, page.collection == change.collection {
                bytes.append(UInt8(ascii: ","))
            } else {
                if page != nil { bytes.append(contentsOf: "]},".utf8) }
                page = (change.space, change.collection)
                bytes.append(contentsOf: #"{"space":"#.utf8)
                JSONValue.string(change.space.lowercasedText).write(into: &bytes)
                bytes.append(contentsOf: #","collection":"#.utf8)
                JSONValue.string(change.collection).write(into: &bytes)
                bytes.append(contentsOf: #","columns":"#.utf8)
                JSONValue.array((rowColumns[change.collection] ?? []).map(JSONValue.string)).write(into: &bytes)
                bytes.append(contentsOf: #","rows":["#.utf8)
            }
            bytes.append(contentsOf: change.json)
        }
        if page != nil { bytes.append(contentsOf: "]}".utf8) }
    }
}
