import FerryCore
import Foundation

/// Something a commit changed that open streams should hear about. Events are hints: a stream that misses one
/// pulls later (its next poke, a reconnect or the periodic sync), so they are never stored.
enum RealtimeEvent: Sendable, Hashable {
    /// A push committed rows in `space` up to sequence number `seq`; `origin` is the device that pushed, which
    /// already has them.
    case committed(space: UUID, seq: Int64, origin: UUID?)
    /// The account's spaces, roles, sessions or devices changed: its streams check their session again, reload
    /// their spaces and ask their devices to pull.
    case accountChanged(UUID)
    /// A session of the account was bound to a device, or one of its devices approved: cached session contexts
    /// (``SessionContextCache``) of the account go; open streams need not hear.
    case sessionsChanged(UUID)
    /// Sealed keys of `space` were stored, which may move its key version: cached session contexts listing it go.
    case keysChanged(space: UUID)
    /// The instance may have missed events (its PostgreSQL listener reconnected): every stream asks for a pull.
    case resync

    /// The event as one line of a PostgreSQL `NOTIFY` payload: `c <space> <seq> <origin|->`, `a <user>`, `u <user>`,
    /// `k <space>` or `r`.
    var notifyPayload: String {
        switch self {
        case .committed(let space, let seq, let origin): "c \(space.lowercasedText) \(seq) \(origin?.lowercasedText ?? "-")"
        case .accountChanged(let user): "a \(user.lowercasedText)"
        case .sessionsChanged(let user): "u \(user.lowercasedText)"
        case .keysChanged(let space): "k \(space.lowercasedText)"
        case .resync: "r"
        }
    }

    /// Parses one payload line; `nil` for anything else (another program notifying on the channel).
    init?(notifyPayload line: Substring) {
        let parts = line.split(separator: " ")
        switch (parts.first, parts.count) {
        case ("c", 4):
            guard let space = UUID(wireText: String(parts[1])), let seq = Int64(parts[2]) else { return nil }
            self = .committed(space: space, seq: seq, origin: parts[3] == "-" ? nil : UUID(wireText: String(parts[3])))
        case ("a", 2), ("u", 2), ("k", 2):
            guard let id = UUID(wireText: String(parts[1])) else { return nil }
            self = switch parts[0] {
            case "a": .accountChanged(id)
            case "u": .sessionsChanged(id)
            default: .keysChanged(space: id)
            }
        case ("r", 1):
            self = .resync
        default:
            return nil
        }
    }
}
