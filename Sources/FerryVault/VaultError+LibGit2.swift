import CLibGit2
import Foundation

extension VaultError {
    /// The one place that turns a libgit2 failure into a message a person can act on.
    ///
    /// Every libgit2 call in FerryVault goes through here (the notes-vault app's `gitSyncErrorMessage`): authentication,
    /// rejected pushes, an unreachable network, a locked repository and a lost folder permission each get a
    /// message that says what to do; anything else keeps libgit2's words.
    public static func mapped(_ failure: GitFailure, context: GitErrorContext = .local) -> VaultError {
        let text = failure.message.lowercased()
        let detail = redacted(failure.message)
        func has(_ fragments: String...) -> Bool { fragments.contains { text.contains($0) } }

        if case .credentialsExhausted(let attempts) = context {
            return VaultError(.authenticationFailed,
                "Authentication failed: the remote refused the credentials \(attempts) times. Check the token ('ferry vault auth token') or sign in again.",
                detail: detail)
        }
        if failure.code == GIT_EAUTH.rawValue || has("authentication", "401", "403 ", "too many redirects or authentication replays", "credentials") {
            return VaultError(.authenticationFailed,
                "Authentication failed: the remote refused the credentials. Check the token ('ferry vault auth token') or the SSH key.",
                detail: detail)
        }
        if failure.code == GIT_ENONFASTFORWARD.rawValue || has("non-fast-forward", "non-fastforward", "not a fast-forward", "fetch first") {
            return VaultError(.rejectedNonFastForward,
                "Remote rejected the push: not a fast-forward. Someone pushed in the meantime; sync again to merge their changes.",
                detail: detail)
        }
        if failure.code == GIT_ECERTIFICATE.rawValue || has("certificate") {
            return VaultError(.certificateInvalid, "The remote's certificate is not trusted; check the URL or the system's certificates.", detail: detail)
        }
        if failure.code == GIT_ELOCKED.rawValue || has("index.lock", ".lock': file exists", "is locked") {
            return VaultError(.repositoryLocked,
                "The repository is locked by another git process. Wait for it to finish; a lock left by a crash is cleared after a few minutes.",
                detail: detail)
        }
        if has("operation not permitted", "permission denied", "eacces", "eperm") {
            return VaultError(.permissionDenied,
                "Permission denied on the vault folder: pick the folder again ('ferry vault open PATH') so access is granted anew.",
                detail: detail)
        }
        if failure.errorClass == GIT_ERROR_NET.rawValue || failure.errorClass == GIT_ERROR_SSL.rawValue
            || has("failed to connect", "connection refused", "could not resolve", "failed to resolve", "network is unreachable",
                   "timed out", "no route to host", "connection reset", "unexpected eof") {
            if has("404", "not found") {
                return VaultError(.remoteNotFound, "The remote has no repository at that URL; check the origin ('ferry vault origin set URL').", detail: detail)
            }
            return VaultError(.networkUnreachable, "Network unreachable: the remote cannot be reached. Check the connection and sync again.", detail: detail)
        }
        if has("404", "repository not found") {
            return VaultError(.remoteNotFound, "The remote has no repository at that URL; check the origin ('ferry vault origin set URL').", detail: detail)
        }
        if failure.code == GIT_ECONFLICT.rawValue || has("conflicts prevent checkout", "would be overwritten") {
            return VaultError(.checkoutConflict,
                "A local file would be overwritten by the remote's version; sync again so it is committed first.", detail: detail)
        }
        if case .push = context, has("rejected", "hook declined", "protected") {
            return VaultError(.pushRejected, "The remote rejected the push: \(detail).", detail: detail)
        }
        if failure.code == GIT_ENOTFOUND.rawValue && has("repository", "could not find repository") {
            return VaultError(.repositoryMissing, "The vault has no git repository; run 'ferry vault init' or 'ferry vault clone'.", detail: detail)
        }
        return VaultError(.gitFailed, "Git failed: \(detail)", detail: detail)
    }

    /// `text` without any `user:password@` in URLs, so a token in a misconfigured URL never reaches a message.
    static func redacted(_ text: String) -> String {
        guard let expression = try? NSRegularExpression(pattern: "(://)[^/@\\s]+@") else { return text }
        return expression.stringByReplacingMatches(in: text, range: NSRange(text.startIndex..., in: text), withTemplate: "$1***@")
    }
}
