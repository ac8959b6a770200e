import FerryCore
import Foundation

/// How a push's merge treats the records it names.
///
/// A device's writes merge field by field by their clocks (``merge``): offline edits from several devices converge
/// whatever order they arrive in. A table request (`/rest/v1`) is a statement, as in PostgREST: it says what the row
/// is now, so its clocks are raised past the stored ones (the server's node, ``HLC/server(_:)``) and it wins by
/// arriving later; it holds together (a rejected row fails the whole request, nothing written); and an insert, an
/// update and an ignored duplicate each see the live row the way SQL does. A tombstone is no row to a table request.
enum WriteIntent: Sendable, Hashable {
    /// A device's writes: merged by clock, each mutation accepted or rejected on its own.
    case merge
    /// `INSERT`: a live record with the id is a duplicate key (the whole request fails); a tombstone is revived.
    case insert
    /// `INSERT … ON CONFLICT DO UPDATE`: written over a live record, or inserted.
    case upsert
    /// `INSERT … ON CONFLICT DO NOTHING`: a live record with the id is left as it is.
    case insertIgnoringDuplicates
    /// `UPDATE`: changes live records only; one deleted meanwhile is left alone.
    case update
    /// `DELETE`: tombstones live records (and, as every delete, their children).
    case delete

    /// Whether the push is a table request's: arrival-ordered and whole.
    var isStatement: Bool { self != .merge }
}

extension RecordState {
    /// This state with every clock moved past `stored`'s clock of the same field (and the tombstone's), so the write
    /// it carries wins a merge with `stored` however far ahead a device's clock ran: the write arrived after it.
    /// `reviving` a tombstone, the fields this state does not name are cleared, as a new SQL row holds none of the
    /// deleted one's values.
    func arriving(after stored: RecordState, reviving: Bool = false) -> RecordState {
        var state = self
        if reviving, let clock = clocks[RecordState.deletedKey] {
            for name in stored.fields.keys where state.fields[name] == nil {
                state.fields[name] = .null
                state.clocks[name] = clock
            }
        }
        for (name, clock) in state.clocks {
            guard let previous = stored.clocks[name], previous >= clock else { continue }
            state.clocks[name] = previous.counter < HLC.maximumCounter
                ? HLC(milliseconds: previous.milliseconds, counter: previous.counter + 1, node: clock.node)
                : HLC(milliseconds: previous.milliseconds + 1, counter: 0, node: clock.node)
        }
        return state
    }
}
