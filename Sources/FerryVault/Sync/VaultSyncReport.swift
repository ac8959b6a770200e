/// What a sync did: always reported, so a success is never silent.
public struct VaultSyncReport: Sendable, Hashable, Codable {
    /// The paths committed from the work tree.
    public var committedFiles: [String] = []
    /// Commits brought in from the remote.
    public var pulledCommits = 0
    /// Commits sent to the remote.
    public var pushedCommits = 0
    /// Paths both sides changed in overlapping ways (local kept, remote version beside it).
    public var conflicts: [VaultConflict] = []
    /// The origin used, and where it came from.
    public var origin: OriginResolution = OriginResolution(url: nil, source: .none)
    /// Whether an `index.lock` left by a crashed run was removed first.
    public var recoveredStaleLock = false

    /// Creates an empty report.
    public init() {}

    /// Whether anything was pushed.
    public var pushed: Bool { pushedCommits > 0 }

    /// One line for people: `committed 2 files, pulled 1 commit, pushed 1 commit, 1 conflict (…)`.
    public var summary: String {
        func count(_ number: Int, _ noun: String) -> String { "\(number) \(noun)\(number == 1 ? "" : "s")" }
        var parts: [String] = []
        if recoveredStaleLock { parts.append("removed a stale index.lock") }
        if !committedFiles.isEmpty { parts.append("committed \(count(committedFiles.count, "file"))") }
        if pulledCommits > 0 { parts.append("pulled \(count(pulledCommits, "commit"))") }
        if pushedCommits > 0 { parts.append("pushed \(count(pushedCommits, "commit"))") }
        if !conflicts.isEmpty {
            let copies = conflicts.map { conflict in
                conflict.copyPath.map { "\(conflict.path) → remote version in \($0)" } ?? "\(conflict.path) (deleted remotely, kept)"
            }
            parts.append("\(count(conflicts.count, "conflict")) (\(copies.joined(separator: "; ")))")
        }
        if origin.url == nil { parts.append("no origin configured, nothing pulled or pushed") }
        return parts.isEmpty ? "already up to date" : parts.joined(separator: ", ")
    }

    enum CodingKeys: String, CodingKey {
        case committedFiles = "committed_files"
        case pulledCommits = "pulled_commits"
        case pushedCommits = "pushed_commits"
        case conflicts, origin
        case recoveredStaleLock = "recovered_stale_lock"
    }
}
