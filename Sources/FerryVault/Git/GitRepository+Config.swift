import CLibGit2
import Foundation

extension GitRepository {
    /// The repository's configuration value for `name` (local, global or system), or `nil`.
    func config(_ name: String) -> String? {
        var config: OpaquePointer?
        guard git_repository_config_snapshot(&config, pointer) == 0 else { return nil }
        defer { git_config_free(config) }
        var value: UnsafePointer<CChar>?
        guard git_config_get_string(&value, config, name) == 0, let value else { return nil }
        return String(cString: value)
    }

    /// Writes `name = value` to the repository's own configuration.
    func setConfig(_ name: String, _ value: String) throws(VaultError) {
        var config: OpaquePointer?
        try LibGit2.check(git_repository_config(&config, pointer))
        defer { git_config_free(config) }
        try LibGit2.check(git_config_set_string(config, name, value))
    }

    /// Writes the boolean `name = value` to the repository's own configuration.
    func setConfig(_ name: String, _ value: Bool) throws(VaultError) {
        var config: OpaquePointer?
        try LibGit2.check(git_repository_config(&config, pointer))
        defer { git_config_free(config) }
        try LibGit2.check(git_config_set_bool(config, name, value ? 1 : 0))
    }

    /// Reads `core.worktree` straight from a git folder's `config` file, without opening it as a repository.
    static func configuredWorkTree(ofGitDirectory gitDirectory: URL) -> String? {
        LibGit2.ensureInitialised()
        var config: OpaquePointer?
        guard git_config_open_ondisk(&config, gitDirectory.appending(path: "config").path(percentEncoded: false)) == 0 else { return nil }
        defer { git_config_free(config) }
        var buffer = git_buf()
        defer { git_buf_dispose(&buffer) }
        guard git_config_get_string_buf(&buffer, config, "core.worktree") == 0, let text = buffer.ptr else { return nil }
        return String(cString: text)
    }

    /// The names of the configured remotes.
    func remoteNames() -> [String] {
        var names = git_strarray()
        guard git_remote_list(&names, pointer) == 0 else { return [] }
        defer { git_strarray_dispose(&names) }
        return (0..<names.count).compactMap { names.strings[$0].map { String(cString: $0) } }
    }

    /// A remote's configured URL and its URL after `url.<base>.insteadOf` rewriting.
    func remoteURLs(_ name: String) -> (configured: String, effective: String)? {
        var remote: OpaquePointer?
        guard git_remote_lookup(&remote, pointer, name) == 0 else { return nil }
        defer { git_remote_free(remote) }
        guard let effective = git_remote_url(remote).map({ String(cString: $0) }) else { return nil }
        let configured = config("remote.\(name).url") ?? effective
        return (configured, effective)
    }

    /// Creates the remote `name` with `url`, or changes its URL.
    func setRemote(_ name: String, url: String) throws(VaultError) {
        var remote: OpaquePointer?
        if git_remote_lookup(&remote, pointer, name) == 0 {
            git_remote_free(remote)
            try LibGit2.check(git_remote_set_url(pointer, name, url))
        } else {
            try LibGit2.check(git_remote_create(&remote, pointer, name, url))
            git_remote_free(remote)
        }
    }
}
