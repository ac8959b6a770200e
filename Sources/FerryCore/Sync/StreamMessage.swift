import Foundation

/// One message of the realtime stream (`GET /sync/v1/stream`), server to client: a JSON object per WebSocket text
/// frame. Messages are hints that a pull would find something; the pull stays the only source of data.
public enum StreamMessage: Sendable, Hashable {
    /// The stream is open; the server closes it (code 4001) when the access token expires at `expiresAt`.
    case ready(expiresAt: Date?)
    /// A commit in `space` reached sequence number `seq`: pull if the space's cursor is below it.
    case change(space: UUID, seq: Int64)
    /// Pull, whatever the cursors say: the account's spaces changed, or the server may have missed commits.
    case sync

    /// The message as the server sends it.
    public var jsonText: String {
        switch self {
        case .ready(let expiresAt):
            var members: [String: JSONValue] = ["type": "ready"]
            if let expiresAt { members["expires_at"] = .string(Timestamp.format(expiresAt)) }
            return JSONValue.object(members).jsonText
        case .change(let space, let seq):
            return JSONValue.object(["type": "change", "space": .string(space.lowercasedText), "seq": .number(Double(seq))]).jsonText
        case .sync:
            return #"{"type":"sync"}"#
        }
    }

    /// Reads a message; `nil` for malformed text or a type this client does not know (newer servers may add some).
    public init?(jsonText: String) {
        guard let members = JSONValue(jsonText: jsonText)?.objectValue, let type = members["type"]?.stringValue else { return nil }
        switch type {
        case "ready":
            self = .ready(expiresAt: members["expires_at"]?.stringValue.flatMap(Timestamp.parse))
        case "change":
            guard let space = members["space"]?.stringValue.flatMap(UUID.init(wireText:)),
                  case .number(let number)? = members["seq"], number >= 0, number <= 9_007_199_254_740_991, number.rounded() == number
            else { return nil }
            self = .change(space: space, seq: Int64(number))
        case "sync":
            self = .sync
        default:
            return nil
        }
    }
}
