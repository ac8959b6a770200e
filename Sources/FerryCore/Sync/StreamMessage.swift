import Foundation

/// One message of the realtime stream (`GET /sync/v1/stream`), server to client: a JSON object per WebSocket text
/// frame. A poke may carry the commit's changes (``CarriedChanges``); otherwise messages are hints that a pull would
/// find something.
public enum StreamMessage: Sendable, Hashable {
    /// The stream is open; the server closes it (code 4001) when the access token expires at `expiresAt`.
    case ready(expiresAt: Date?)
    /// A commit in `space` reached sequence number `seq`: pull if the space's cursor is below it, unless `carried`
    /// holds the changes and the cursor meets their start.
    case change(space: UUID, seq: Int64, carried: CarriedChanges? = nil)
    /// Pull, whatever the cursors say: the account's spaces changed, or the server may have missed commits.
    case sync

    /// The message as the server sends it.
    public var jsonText: String {
        var bytes: [UInt8] = []
        switch self {
        case .ready(let expiresAt):
            var object = JSONObjectWriter(&bytes)
            if let expiresAt {
                object.key("expires_at", &bytes)
                JSONValue.string(Timestamp.format(expiresAt)).write(into: &bytes)
            }
            object.key("type", &bytes)
            JSONValue.string("ready").write(into: &bytes)
            object.end(&bytes)
        case .change(let space, let seq, let carried):
            Self.writeChange(into: &bytes, space: space, seq: seq, after: carried?.after, pull: carried.map { carried in { carried.pull.writeJSON(into: &$0) } })
        case .sync:
            return #"{"type":"sync"}"#
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Writes a `change` message; with `after` and `pull`, one that carries its changes (`pull` writes the reply
    /// object). The server writes its carried changes as it read them, so this is the one writer of both.
    package static func writeChange(
        into bytes: inout [UInt8], space: UUID, seq: Int64, after: Int64?, pull: ((inout [UInt8]) -> Void)?
    ) {
        var object = JSONObjectWriter(&bytes)
        if let after, let pull {
            object.key("after", &bytes)
            bytes.append(contentsOf: String(after).utf8)
            object.key("pull", &bytes)
            pull(&bytes)
        }
        object.key("seq", &bytes)
        bytes.append(contentsOf: String(seq).utf8)
        object.key("space", &bytes)
        JSONValue.string(space.lowercasedText).write(into: &bytes)
        object.key("type", &bytes)
        JSONValue.string("change").write(into: &bytes)
        object.end(&bytes)
    }

    /// Reads a message; `nil` for malformed text or a type this client does not know (newer servers may add some).
    /// A `change` whose carried changes cannot be read is still a poke: the device pulls.
    public init?(jsonText: String) {
        var text = jsonText
        guard let message = text.withUTF8({ Self.read($0, carrying: true) ?? Self.read($0, carrying: false) }) else { return nil }
        self = message
    }

    /// Reads a message from its UTF-8 text; `nil` as ``init(jsonText:)``. Without `carrying`, a `change` is a plain
    /// poke: its carried changes are skipped, not parsed.
    package static func read(_ text: UnsafeBufferPointer<UInt8>, carrying: Bool) -> StreamMessage? {
        var parser = JSONTextParser(bytes: text, maximumDepth: JSONValue.defaultMaximumDepth)
        guard let message = try? read(&parser, carrying: carrying) else { return nil }
        parser.skipWhitespace()
        return parser.position == parser.bytes.count ? message : nil
    }

    private static func read(_ parser: inout JSONTextParser, carrying: Bool) throws -> StreamMessage {
        var (type, space, seq, after, expiresAt): (String?, UUID?, Int64?, Int64?, String?)
        var pull: PullResponse?
        try parser.readObject { parser, key in
            switch key {
            case "type": type = try parser.readString()
            case "space": space = try parser.readUUID()
            case "seq": seq = try parser.readInt64()
            // Members that only add to a message are read leniently: one that is off leaves the rest of the message.
            case "after": after = try Self.lenient(&parser) { try $0.readInt64() }
            case "pull" where carrying: pull = try PullResponse(stream: &parser)
            case "expires_at": expiresAt = try Self.lenient(&parser) { try $0.readString() }
            default: try parser.skipValue()
            }
        }
        switch type {
        case "ready":
            // (An unreadable expiry is none: the stream still closes with 4001 when the token expires.)
            return .ready(expiresAt: expiresAt.flatMap(Timestamp.parse))
        case "change":
            guard let space, let seq, seq >= 0 else { throw parser.corrupted("A change names its space and a sequence number.") }
            guard let after, let pull, after >= 0, after < seq else { return .change(space: space, seq: seq) }
            return .change(space: space, seq: seq, carried: CarriedChanges(after: after, pull: pull))
        case "sync":
            return .sync
        default:
            throw parser.corrupted("Not a message this client knows.")
        }
    }
}

extension StreamMessage {
    /// The value `read` reads, or `nil` with the value skipped when it is of another kind.
    fileprivate static func lenient<Value>(_ parser: inout JSONTextParser, _ read: (inout JSONTextParser) throws -> Value) throws -> Value? {
        let start = parser.position
        do {
            return try read(&parser)
        } catch is DecodingError {
            parser.position = start
            try parser.skipValue()
            return nil
        }
    }
}

/// The changes a poke carries: what a pull from cursor `after` of its space answers (``PullResponse``, its cursor
/// the poke's `seq`), read once by the server for every stream of the space. A device applies them only when its
/// cursor is at least `after`, so a lost or reordered message costs a pull, never a change.
public struct CarriedChanges: Sendable, Hashable {
    /// The cursor the changes follow.
    public var after: Int64
    /// The changes, as a pull's reply.
    public var pull: PullResponse

    /// Creates carried changes.
    public init(after: Int64, pull: PullResponse) {
        self.after = after
        self.pull = pull
    }
}
