import Foundation

/// How one sync runs.
public struct SyncOptions: Sendable {
    /// This machine's name, in commit messages (`{{hostname}}`, the `Ferry-Host:` trailer) and in the names
    /// of conflict copies the other side writes.
    public var hostname: String = ProcessInfo.processInfo.hostName
    /// How many times a credential is offered before authentication fails (a wrong token never loops).
    public var maxAuthenticationAttempts = 3
    /// How old an `index.lock` must be before it counts as left behind by a crashed run and is removed.
    public var staleLockAge: Duration = .seconds(300)
    /// How many fetch-merge-push rounds to try when someone else pushes in between.
    public var maxPushRounds = 3
    /// The clock's "now", for commit messages and lock ages.
    public var now: @Sendable () -> Date = { Date() }

    /// Creates the defaults.
    public init() {}
}
