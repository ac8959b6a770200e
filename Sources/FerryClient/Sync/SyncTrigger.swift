import Foundation

/// Why a sync was asked for. Triggers coalesce: however many arrive, at most one sync runs and one waits.
public enum SyncTrigger: Sendable, Hashable, CustomStringConvertible {
    /// The app launched.
    case launch
    /// The app came to the foreground (became active).
    case foreground
    /// The network came back after being lost: a transition, never a monitor's first report.
    case connectivityRestored
    /// The periodic timer fired.
    case periodic
    /// A local write joined the outbox (debounced briefly, so a burst of writes makes one push).
    case localChange
    /// The server announced a commit at `seq` in `space` (realtime); ignored when the cursor is already there.
    case realtimePoke(space: UUID, seq: Int64)
    /// The realtime stream (re)connected, or the server asked for a sync its pokes cannot describe (the account's
    /// spaces changed, or it may have missed commits): catch up on whatever happened meanwhile.
    case realtimeSync
    /// The person asked (pull to refresh, a button).
    case manual

    /// A short name for logs and reports: `launch`, `foreground`, …
    public var name: String {
        switch self {
        case .launch: "launch"
        case .foreground: "foreground"
        case .connectivityRestored: "connectivityRestored"
        case .periodic: "periodic"
        case .localChange: "localChange"
        case .realtimePoke: "realtimePoke"
        case .realtimeSync: "realtimeSync"
        case .manual: "manual"
        }
    }

    /// The name.
    public var description: String { name }
}
