import CLibGit2
import Foundation

/// An open libgit2 repository; freed when released. Not thread-safe: one sync uses it at a time.
final class GitRepository {
    let pointer: OpaquePointer

    private init(pointer: OpaquePointer) {
        self.pointer = pointer
    }

    deinit {
        git_repository_free(pointer)
    }

    /// Opens the repository whose git folder is `gitDirectory`, with `workTree` as its work tree.
    ///
    /// libgit2 does not find a separate git folder from the work tree by itself; ``RepositoryLocator`` does, and
    /// this sets the work tree explicitly so a separate git folder behaves as an inline one.
    static func open(gitDirectory: URL, workTree: URL) throws(VaultError) -> GitRepository {
        LibGit2.ensureInitialised()
        var repository: OpaquePointer?
        try LibGit2.check(git_repository_open_ext(&repository, gitDirectory.path(percentEncoded: false), UInt32(GIT_REPOSITORY_OPEN_NO_SEARCH.rawValue), nil))
        let opened = GitRepository(pointer: repository!)
        if opened.workTree?.standardizedFileURL.path(percentEncoded: false) != workTree.standardizedFileURL.path(percentEncoded: false) {
            try LibGit2.check(git_repository_set_workdir(opened.pointer, workTree.path(percentEncoded: false), 0))
        }
        return opened
    }

    /// Creates a repository for `workTree`: inline (`<workTree>/.git`) or in `gitDirectory` with `core.worktree` set.
    static func create(workTree: URL, gitDirectory: URL?, initialBranch: String) throws(VaultError) -> GitRepository {
        LibGit2.ensureInitialised()
        var options = git_repository_init_options()
        try LibGit2.check(git_repository_init_options_init(&options, UInt32(GIT_REPOSITORY_INIT_OPTIONS_VERSION)))
        options.flags = GIT_REPOSITORY_INIT_MKPATH.rawValue
        var repository: OpaquePointer?
        let path = gitDirectory ?? workTree
        let result: Int32 = initialBranch.withCString { branch in
            options.initial_head = branch
            if gitDirectory != nil {
                options.flags |= GIT_REPOSITORY_INIT_NO_DOTGIT_DIR.rawValue
                return workTree.path(percentEncoded: false).withCString { tree in
                    options.workdir_path = tree
                    return git_repository_init_ext(&repository, path.path(percentEncoded: false), &options)
                }
            }
            return git_repository_init_ext(&repository, path.path(percentEncoded: false), &options)
        }
        try LibGit2.check(result)
        let created = GitRepository(pointer: repository!)
        if gitDirectory != nil {
            // Keep the work tree free of a `.git` link (the iCloud case): discovery goes through the storage.
            let link = workTree.appending(path: ".git")
            var isFolder: ObjCBool = false
            if FileManager.default.fileExists(atPath: link.path(percentEncoded: false), isDirectory: &isFolder), !isFolder.boolValue {
                try? FileManager.default.removeItem(at: link)
            }
            try created.setConfig("core.worktree", workTree.standardizedFileURL.path(percentEncoded: false))
            try created.setConfig("core.bare", false)
        }
        return created
    }

    /// The git folder (`.git` or the separate one).
    var gitDirectory: URL {
        URL(filePath: String(cString: git_repository_path(pointer)), directoryHint: .isDirectory)
    }

    /// The work tree, or `nil` for a bare repository.
    var workTree: URL? {
        git_repository_workdir(pointer).map { URL(filePath: String(cString: $0), directoryHint: .isDirectory) }
    }

    /// Whether HEAD points to a branch without commits yet.
    var isHeadUnborn: Bool {
        git_repository_head_unborn(pointer) == 1
    }

    /// The branch HEAD points to, such as `main` (also when it has no commits yet).
    func currentBranch() throws(VaultError) -> String {
        var reference: OpaquePointer?
        try LibGit2.check(git_reference_lookup(&reference, pointer, "HEAD"))
        defer { git_reference_free(reference) }
        guard let target = git_reference_symbolic_target(reference) else {
            throw VaultError(.gitFailed, "The vault's repository has a detached HEAD; check out a branch (git switch main) and sync again.")
        }
        let name = String(cString: target)
        return name.hasPrefix("refs/heads/") ? String(name.dropFirst("refs/heads/".count)) : name
    }

    /// The commit a reference points to, or `nil` when it does not exist.
    func commitID(of referenceName: String) -> git_oid? {
        var oid = git_oid()
        return git_reference_name_to_id(&oid, pointer, referenceName) == 0 ? oid : nil
    }

    /// Points `referenceName` at `commit` (creating it), with `message` in the reflog.
    func setReference(_ referenceName: String, to commit: git_oid, message: String) throws(VaultError) {
        var reference: OpaquePointer?
        var oid = commit
        try LibGit2.check(git_reference_create(&reference, pointer, referenceName, &oid, 1, message))
        git_reference_free(reference)
    }
}
