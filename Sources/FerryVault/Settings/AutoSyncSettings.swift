/// Automatic sync: an interval and pull-on-open.
public struct AutoSyncSettings: Sendable, Hashable, Codable {
    /// The shortest interval allowed, in seconds.
    public static let minimumInterval = 10

    /// Seconds between syncs, at least ``minimumInterval``; `nil` turns interval sync off.
    public var intervalSeconds: Int?
    /// Whether opening the vault syncs (pulls) first.
    public var pullOnOpen = false

    /// Creates auto-sync settings (validate a user-given interval with ``validatedInterval(_:)``).
    public init(intervalSeconds: Int? = nil, pullOnOpen: Bool = false) {
        self.intervalSeconds = intervalSeconds
        self.pullOnOpen = pullOnOpen
    }

    /// The validated interval: throws ``VaultError/Code/invalidArgument`` below the minimum.
    public static func validatedInterval(_ seconds: Int) throws(VaultError) -> Int {
        guard seconds >= minimumInterval else {
            throw VaultError(.invalidArgument, "The sync interval must be at least \(minimumInterval) seconds, not \(seconds).")
        }
        return seconds
    }

    enum CodingKeys: String, CodingKey {
        case intervalSeconds = "interval_seconds"
        case pullOnOpen = "pull_on_open"
    }
}
