import CLibGit2
import Foundation

extension GitRepository {
    /// Stages every change of the work tree (new, modified and deleted files, `.gitignore` respected) and
    /// returns the paths that differ from HEAD.
    func stageAll() throws(VaultError) -> [String] {
        var index: OpaquePointer?
        try LibGit2.check(git_repository_index(&index, pointer))
        defer { git_index_free(index) }
        try withPathspec(["*"]) { (spec: inout git_strarray) throws(VaultError) in
            try LibGit2.check(git_index_add_all(index, &spec, GIT_INDEX_ADD_DEFAULT.rawValue, nil, nil))
            try LibGit2.check(git_index_update_all(index, &spec, nil, nil))
        }
        try LibGit2.check(git_index_write(index))
        return try changedPaths(index: index!)
    }

    /// The paths whose staged content differs from HEAD's.
    private func changedPaths(index: OpaquePointer) throws(VaultError) -> [String] {
        let head = try headTree()
        defer { git_tree_free(head) }
        var diff: OpaquePointer?
        try LibGit2.check(git_diff_tree_to_index(&diff, pointer, head, index, nil))
        defer { git_diff_free(diff) }
        return (0..<git_diff_num_deltas(diff)).compactMap { position in
            guard let delta = git_diff_get_delta(diff, position) else { return nil }
            let file = delta.pointee.new_file.path ?? delta.pointee.old_file.path
            return file.map { String(cString: $0) }
        }
    }

    /// HEAD's tree (owned by the caller), or `nil` when HEAD has no commit yet.
    func headTree() throws(VaultError) -> OpaquePointer? {
        guard !isHeadUnborn, var oid = commitID(of: "HEAD") else { return nil }
        return try tree(ofCommit: &oid)
    }

    /// The tree of a commit (owned by the caller).
    func tree(ofCommit oid: inout git_oid) throws(VaultError) -> OpaquePointer {
        var commit: OpaquePointer?
        try LibGit2.check(git_commit_lookup(&commit, pointer, &oid))
        defer { git_commit_free(commit) }
        var tree: OpaquePointer?
        try LibGit2.check(git_commit_tree(&tree, commit))
        return tree!
    }

    /// Commits the current index on HEAD's branch with `parents` (HEAD when `nil`).
    func commitIndex(message: String, author: VaultAuthor, parents: [git_oid]? = nil) throws(VaultError) -> git_oid {
        var index: OpaquePointer?
        try LibGit2.check(git_repository_index(&index, pointer))
        defer { git_index_free(index) }
        var treeID = git_oid()
        try LibGit2.check(git_index_write_tree(&treeID, index))
        let parentIDs = parents ?? (isHeadUnborn ? [] : commitID(of: "HEAD").map { [$0] } ?? [])
        return try commit(tree: treeID, parents: parentIDs, message: message, author: author, updating: "HEAD")
    }

    /// Creates a commit of `tree` with `parents`, moving `referenceName` (when given) to it.
    func commit(tree treeID: git_oid, parents parentIDs: [git_oid], message: String, author: VaultAuthor,
                updating referenceName: String?) throws(VaultError) -> git_oid {
        var treeOID = treeID
        var tree: OpaquePointer?
        try LibGit2.check(git_tree_lookup(&tree, pointer, &treeOID))
        defer { git_tree_free(tree) }
        var parents: [OpaquePointer?] = []
        defer { parents.forEach { git_commit_free($0) } }
        for var parentID in parentIDs {
            var parent: OpaquePointer?
            try LibGit2.check(git_commit_lookup(&parent, pointer, &parentID))
            parents.append(parent)
        }
        var signature: UnsafeMutablePointer<git_signature>?
        try LibGit2.check(git_signature_now(&signature, author.name, author.email))
        defer { git_signature_free(signature) }
        var oid = git_oid()
        let count = parents.count
        let result = parents.withUnsafeMutableBufferPointer { buffer in
            git_commit_create(&oid, pointer, referenceName, signature, signature, "UTF-8", message, tree, count, buffer.baseAddress)
        }
        try LibGit2.check(result)
        return oid
    }

    /// The full message of a commit.
    func message(ofCommit oid: git_oid) -> String {
        var oid = oid
        var commit: OpaquePointer?
        guard git_commit_lookup(&commit, pointer, &oid) == 0 else { return "" }
        defer { git_commit_free(commit) }
        return git_commit_message(commit).map { String(cString: $0) } ?? ""
    }

    /// A commit's committer name and time.
    func committer(ofCommit oid: git_oid) -> (name: String, date: Date) {
        var oid = oid
        var commit: OpaquePointer?
        guard git_commit_lookup(&commit, pointer, &oid) == 0 else { return ("remote", Date()) }
        defer { git_commit_free(commit) }
        let signature = git_commit_committer(commit)
        let name = signature?.pointee.name.map { String(cString: $0) } ?? "remote"
        let seconds = signature.map { TimeInterval($0.pointee.when.time) } ?? Date().timeIntervalSince1970
        return (name, Date(timeIntervalSince1970: seconds))
    }
}

/// Runs `body` with a `git_strarray` of `paths`, valid only inside.
func withPathspec<Value>(_ paths: [String], _ body: (inout git_strarray) throws(VaultError) -> Value) throws(VaultError) -> Value {
    var pointers = paths.map { strdup($0) }
    defer { pointers.forEach { free($0) } }
    let count = pointers.count
    let outcome: Result<Value, VaultError> = pointers.withUnsafeMutableBufferPointer { buffer in
        var array = git_strarray(strings: buffer.baseAddress, count: count)
        do throws(VaultError) {
            return .success(try body(&array))
        } catch {
            return .failure(error)
        }
    }
    return try outcome.get()
}
