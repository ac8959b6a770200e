/// What was being done when libgit2 failed, so the mapped message can say what to do next.
public enum GitErrorContext: Sendable, Hashable {
    /// Work on the local repository and folder.
    case local
    /// Fetching from the remote.
    case fetch
    /// Pushing to the remote.
    case push
    /// Authentication gave up after the bounded number of attempts.
    case credentialsExhausted(attempts: Int)
}
