import FerryCore
import Foundation

/// The server's reply to a pull: a ``PullResponse`` whose changes were written into JSON as the store read them
/// (``WireChange``), so they go out without being built as ``Change`` values and written again.
struct PullReply: Sendable, JSONTextWritable {
    var changes: [WireChange] = []
    var cursors: [UUID: Int64] = [:]
    var hasMore = false
    var resetRequired: [UUID] = []
    var keyVersions: [UUID: Int] = [:]

    var approximateJSONByteCount: Int {
        changes.reduce(256 + 64 * (cursors.count + keyVersions.count + resetRequired.count)) { $0 + $1.json.count + 1 }
    }

    func writeJSON(into bytes: inout [UInt8]) {
        PullResponse.writeJSON(into: &bytes, cursors: cursors, hasMore: hasMore, keyVersions: keyVersions, resetRequired: resetRequired) { bytes in
            for (index, change) in changes.enumerated() {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                bytes.append(contentsOf: change.json)
            }
        }
    }

    /// For coders other than ``JSONValueEncoder`` (which calls ``writeJSON(into:)``): the same JSON, as a tree.
    func encode(to encoder: any Encoder) throws {
        var bytes: [UInt8] = []
        writeJSON(into: &bytes)
        try bytes.withUnsafeBufferPointer { try JSONValue(parsing: $0) }.encode(to: encoder)
    }
}
