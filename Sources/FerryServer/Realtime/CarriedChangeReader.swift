import FerryCore
import Foundation

/// A poke that carries its changes: the stream message, written once for every stream of its space.
struct CarriedMessage: Sendable {
    /// The cursor the changes follow.
    let after: Int64
    /// The sequence number they reach.
    let seq: Int64
    /// The whole `change` message.
    let text: String
}

/// Reads what a poke carries: the changes a pull from the last announced sequence number gets, in the clock form and
/// layout Ferry's clients pull in, through the pull's own storage read.
struct CarriedChangeReader: Sendable {
    let storage: any RecordStorage
    let schema: Schema
    /// The largest message (``RealtimeLimits/carriedChangeBytes``).
    let budget: Int

    /// The message announcing `space` at `seq` or later with the changes after `after`; `nil` when they do not fit
    /// the budget, the space was purged past `after`, or the read failed (the poke then goes without them).
    ///
    /// Called once the commit at `seq` is visible. Commits of one space take its row lock in turn, so every change at
    /// or below `seq` is visible too, and the read covers whatever else committed since: its page, complete, proves
    /// the space up to the later of `seq` and its last change.
    func message(space: UUID, after: Int64, through seq: Int64) async -> CarriedMessage? {
        let format = PullFormat(clockForm: .row, layout: .changes)
        guard let pages = try? await storage.pull(
            [SpaceCursor(space: space, cursor: after)], limit: max(1, budget / 64), bytes: budget, schema: schema, format: format
        ), let page = pages[space], !page.hasMore, !page.resetRequired
        else { return nil }
        let reached = max(seq, page.cursor)
        let reply = PullReply(layout: .changes, changes: page.changes, cursors: [space: reached])
        var bytes: [UInt8] = []
        bytes.reserveCapacity(reply.approximateJSONByteCount + 160)
        StreamMessage.writeChange(into: &bytes, space: space, seq: reached, after: after) { reply.writeJSON(into: &$0) }
        guard bytes.count <= budget else { return nil }
        return CarriedMessage(after: after, seq: reached, text: String(decoding: bytes, as: UTF8.self))
    }
}
