import FerryCore
/// A vault failure: a stable machine ``code`` and a message a person can act on.
///
/// Messages never contain tokens or passwords; ``detail`` keeps libgit2's own words for logs and bug reports.
public struct VaultError: FerryError, Hashable {
    /// Stable machine codes (``ErrorCode``s declared below); compare against these, never against messages.
    public typealias Code = ErrorCode

    /// The stable machine code.
    public var code: Code
    /// What happened and what to do, for a person.
    public var message: String
    /// libgit2's own message, when the failure came from libgit2 (credentials removed).
    public var detail: String?

    /// Creates an error.
    public init(_ code: Code, _ message: String, detail: String? = nil) {
        self.code = code
        self.message = message
        self.detail = detail
    }

}

extension ErrorCode {

    /// The remote refused the credentials (or there were none it accepts).
    public static let authenticationFailed: ErrorCode = "authentication_failed"
    /// The remote refused the push because it is not a fast-forward.
    public static let rejectedNonFastForward: ErrorCode = "rejected_non_fast_forward"
    /// The remote refused the push for another reason (a hook, a protected branch).
    public static let pushRejected: ErrorCode = "push_rejected"
    /// The remote host cannot be reached.
    public static let networkUnreachable: ErrorCode = "network_unreachable"
    /// The remote's TLS certificate is not trusted.
    public static let certificateInvalid: ErrorCode = "certificate_invalid"
    /// The remote answered but has no repository at that URL.
    public static let remoteNotFound: ErrorCode = "remote_not_found"
    /// Another process holds the repository's lock (a recent `index.lock`).
    public static let repositoryLocked: ErrorCode = "repository_locked"
    /// The vault folder cannot be read or written (on Apple platforms: folder access was lost).
    public static let permissionDenied: ErrorCode = "permission_denied"
    /// No vault folder is chosen, or it does not exist.
    public static let vaultMissing: ErrorCode = "vault_missing"
    /// The vault has no git repository yet.
    public static let repositoryMissing: ErrorCode = "repository_missing"
    /// The vault already has a repository (init or clone would replace it).
    public static let repositoryExists: ErrorCode = "repository_exists"
    /// No origin is configured anywhere (vault, global, parent vault, repository).
    public static let originMissing: ErrorCode = "origin_missing"
    /// A local change would be overwritten by checking out the remote's files.
    public static let checkoutConflict: ErrorCode = "checkout_conflict"
    /// A value given by the caller is not valid (a URL, an interval, a folder outside the vault).
    public static let invalidArgument: ErrorCode = "invalid_argument"
    /// GitHub sign-in failed (denied, mismatched state, code exchange refused).
    public static let oauthFailed: ErrorCode = "oauth_failed"
    /// Any other git failure; ``VaultError/detail`` has libgit2's message.
    public static let gitFailed: ErrorCode = "git_failed"
}
