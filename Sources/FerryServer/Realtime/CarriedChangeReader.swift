import FerryCore
import Foundation
import NIOCore

/// A poke that carries its changes: the stream message, written once for every stream of its space.
struct CarriedMessage: Sendable {
    /// The cursor the changes follow.
    let after: Int64
    /// The sequence number of the last of them.
    let seq: Int64
    /// The whole `change` message.
    let bytes: ByteBuffer
    /// The message as a WebSocket text frame from a server (RFC 6455 §5.2: final, unmasked), framed once for every
    /// stream that sends it.
    let frame: ByteBuffer

    init(after: Int64, seq: Int64, bytes: ByteBuffer) {
        self.after = after
        self.seq = seq
        self.bytes = bytes
        var frame = ByteBuffer()
        frame.reserveCapacity(bytes.readableBytes + 10)
        frame.writeInteger(UInt8(0x81))  // FIN, text
        switch bytes.readableBytes {
        case ..<126: frame.writeInteger(UInt8(bytes.readableBytes))
        case ..<65536:
            frame.writeInteger(UInt8(126))
            frame.writeInteger(UInt16(bytes.readableBytes))
        default:
            frame.writeInteger(UInt8(127))
            frame.writeInteger(UInt64(bytes.readableBytes))
        }
        frame.writeImmutableBuffer(bytes)
        self.frame = frame
    }

    /// The message as text.
    var text: String { String(buffer: bytes) }
}

/// Reads what a poke carries: the changes a pull from the last announced sequence number gets, in the clock form and
/// layout Ferry's clients pull in, through the pull's own storage read.
struct CarriedChangeReader: Sendable {
    let storage: any RecordStorage
    let schema: Schema
    /// The largest message (``RealtimeLimits/carriedChangeBytes``).
    let budget: Int
    /// How long a read may take before its commits go as plain pokes (a slow read must not hold the space's pokes).
    var timeout: Duration = .seconds(2)

    /// The message carrying the changes of `space` after `after`; `nil` when there are none this instance's schema
    /// knows, they do not fit the budget, the space was purged past `after`, or the read failed or was slow (the poke
    /// then goes without them).
    ///
    /// Called once a commit is visible. Commits of one space take its row lock in turn, so every change below it is
    /// visible too. Like a pull's page, the message claims the space only up to its last change, as a pull from this
    /// instance would.
    func message(space: UUID, after: Int64) async -> CarriedMessage? {
        let (storage, schema, budget) = (storage, schema, budget)
        let format = PullFormat(clockForm: .row, layout: .changes)
        guard let pages = try? await withTimeout(timeout, {
            try await storage.pull([SpaceCursor(space: space, cursor: after)], limit: max(1, budget / 64), bytes: budget, schema: schema, format: format)
        }), let page = pages[space], !page.hasMore, !page.resetRequired, !page.changes.isEmpty
        else { return nil }
        let reply = PullReply(layout: .changes, changes: page.changes, cursors: [space: page.cursor])
        var bytes: [UInt8] = []
        bytes.reserveCapacity(reply.approximateJSONByteCount + 160)
        StreamMessage.writeChange(into: &bytes, space: space, seq: page.cursor, after: after) { reply.writeJSON(into: &$0) }
        // Clients read messages nested as deep as a pull reply allows; a field nested deeper goes by pull.
        guard bytes.count <= budget, Self.nesting(of: bytes) <= JSONValue.defaultMaximumDepth else { return nil }
        return CarriedMessage(after: after, seq: page.cursor, bytes: ByteBuffer(bytes: bytes))
    }

    /// The deepest nesting of arrays and objects in JSON text.
    static func nesting(of bytes: [UInt8]) -> Int {
        var (depth, deepest, inString, escaped) = (0, 0, false, false)
        for byte in bytes {
            if inString {
                if escaped { escaped = false } else if byte == UInt8(ascii: "\\") { escaped = true } else if byte == UInt8(ascii: "\"") { inString = false }
                continue
            }
            switch byte {
            case UInt8(ascii: "\""): inString = true
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                depth += 1
                deepest = max(deepest, depth)
            case UInt8(ascii: "}"), UInt8(ascii: "]"): depth -= 1
            default: break
            }
        }
        return deepest
    }
}
