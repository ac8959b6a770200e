import CLibGit2
import Foundation

/// The state one fetch or push shares with libgit2's callbacks: the credentials, the attempts made, and the
/// references the remote rejected.
final class RemoteSession {
    let credentials: VaultCredentials
    let maxAttempts: Int
    var attempts = 0
    /// Credentials actually handed to libgit2 (an SSH key is no use to an HTTPS remote).
    var offered = 0
    var isExhausted = false
    var rejections: [String: String] = [:]

    init(credentials: VaultCredentials, maxAttempts: Int) {
        self.credentials = credentials
        self.maxAttempts = max(1, maxAttempts)
    }

    /// Fills libgit2's callback table with this session's credential and push-status callbacks.
    func install(into callbacks: inout git_remote_callbacks) {
        callbacks.payload = Unmanaged.passUnretained(self).toOpaque()
        callbacks.credentials = { out, _, usernameFromURL, allowed, payload in
            guard let out, let payload else { return GIT_PASSTHROUGH.rawValue }
            let session = Unmanaged<RemoteSession>.fromOpaque(payload).takeUnretainedValue()
            return session.acquire(out, usernameFromURL: usernameFromURL.map { String(cString: $0) }, allowed: allowed)
        }
        callbacks.push_update_reference = { reference, status, payload in
            guard let payload, let reference, let status else { return 0 }
            let session = Unmanaged<RemoteSession>.fromOpaque(payload).takeUnretainedValue()
            session.rejections[String(cString: reference)] = String(cString: status)
            return 0
        }
    }

    /// Hands libgit2 the next credential, at most ``maxAttempts`` times: a wrong token fails, it never loops.
    private func acquire(_ out: UnsafeMutablePointer<UnsafeMutablePointer<git_credential>?>, usernameFromURL: String?, allowed: UInt32) -> Int32 {
        attempts += 1
        guard attempts <= maxAttempts else {
            isExhausted = true
            return GIT_EUSER.rawValue
        }
        if allowed & GIT_CREDENTIAL_USERPASS_PLAINTEXT.rawValue != 0, let token = credentials.token {
            let user = credentials.username ?? usernameFromURL ?? "x-access-token"
            offered += 1
            return git_credential_userpass_plaintext_new(out, user, token)
        }
        if allowed & GIT_CREDENTIAL_SSH_KEY.rawValue != 0, let key = credentials.sshKey {
            let user = usernameFromURL ?? credentials.username ?? "git"
            offered += 1
            return git_credential_ssh_key_new(out, user, key.publicKeyPath, key.privateKeyPath, key.passphrase)
        }
        if allowed & GIT_CREDENTIAL_USERNAME.rawValue != 0 {
            return git_credential_username_new(out, usernameFromURL ?? credentials.username ?? "git")
        }
        isExhausted = true
        return GIT_PASSTHROUGH.rawValue
    }

    /// The error for a failed network call: bounded-attempt exhaustion wins over libgit2's own message.
    func error(for result: Int32, _ context: GitErrorContext) -> VaultError {
        if isExhausted && offered == 0 {
            return VaultError(.authenticationFailed,
                "Authentication failed: the remote asks for credentials and none that fit are stored (a token for HTTPS, an SSH key for SSH). Add a token ('ferry vault auth token') or sign in with GitHub.")
        }
        if isExhausted {
            return LibGit2.lastError(result, .credentialsExhausted(attempts: maxAttempts))
        }
        return LibGit2.lastError(result, context)
    }
}

extension GitRepository {
    /// Fetches `remoteName`'s branches into `refs/remotes/<remoteName>/`.
    func fetch(_ remoteName: String, session: RemoteSession) throws(VaultError) {
        var remote: OpaquePointer?
        try LibGit2.check(git_remote_lookup(&remote, pointer, remoteName))
        defer { git_remote_free(remote) }
        var options = git_fetch_options()
        try LibGit2.check(git_fetch_options_init(&options, UInt32(GIT_FETCH_OPTIONS_VERSION)))
        session.install(into: &options.callbacks)
        let result = git_remote_fetch(remote, nil, &options, "ferry: fetch")
        guard result == 0 else { throw session.error(for: result, .fetch) }
    }

    /// Pushes `branch` to the same branch of `remoteName`; a reference the remote rejects is an error.
    func push(branch: String, to remoteName: String, session: RemoteSession) throws(VaultError) {
        var remote: OpaquePointer?
        try LibGit2.check(git_remote_lookup(&remote, pointer, remoteName))
        defer { git_remote_free(remote) }
        var options = git_push_options()
        try LibGit2.check(git_push_options_init(&options, UInt32(GIT_PUSH_OPTIONS_VERSION)))
        session.install(into: &options.callbacks)
        let refspec = "refs/heads/\(branch):refs/heads/\(branch)"
        let result = withPathspecUnchecked([refspec]) { spec in git_remote_push(remote, &spec, &options) }
        guard result == 0 else { throw session.error(for: result, .push) }
        if let (reference, status) = session.rejections.first {
            throw VaultError.mapped(GitFailure(code: -1, errorClass: 0, message: "\(reference) rejected: \(status)"), context: .push)
        }
        // Record what the remote now has, as git does after a push.
        if let local = commitID(of: "refs/heads/\(branch)") {
            try? setReference("refs/remotes/\(remoteName)/\(branch)", to: local, message: "ferry: push")
        }
    }
}

/// Runs a non-throwing `body` with a `git_strarray` of `paths`.
func withPathspecUnchecked(_ paths: [String], _ body: (inout git_strarray) -> Int32) -> Int32 {
    var pointers = paths.map { strdup($0) }
    defer { pointers.forEach { free($0) } }
    let count = pointers.count
    return pointers.withUnsafeMutableBufferPointer { buffer in
        var array = git_strarray(strings: buffer.baseAddress, count: count)
        return body(&array)
    }
}
