import CLibGit2
import Foundation

/// One side of a conflicted path, copied out of libgit2's index.
struct ConflictSide {
    var path: String
    var id: git_oid
    var mode: UInt32

    init?(_ entry: UnsafePointer<git_index_entry>?) {
        guard let entry, let path = entry.pointee.path else { return nil }
        self.path = String(cString: path)
        self.id = entry.pointee.id
        self.mode = entry.pointee.mode
    }
}

/// What integrating the remote branch did.
struct IntegrationOutcome {
    var pulledCommits = 0
    var conflicts: [VaultConflict] = []
}

extension GitRepository {
    /// Brings `remoteReference`'s commits into `branch`: fast-forward, or a merge where non-overlapping text
    /// changes merge line by line and every conflicting path keeps the local content, with the remote version
    /// written beside it under the name `conflictName` returns. Never writes conflict markers.
    func integrate(
        remoteReference: String, branch: String, author: VaultAuthor, mergeMessage: String,
        conflictName: (_ path: String, _ existing: (String) -> Bool) -> String
    ) throws(VaultError) -> IntegrationOutcome {
        guard var theirs = commitID(of: remoteReference) else { return IntegrationOutcome() }
        let localReference = "refs/heads/\(branch)"
        guard var ours = commitID(of: localReference) else {
            try checkout(commit: &theirs)
            try setReference(localReference, to: theirs, message: "ferry: initial pull")
            return IntegrationOutcome(pulledCommits: try countCommits(from: theirs, excluding: nil))
        }
        if git_oid_equal(&ours, &theirs) != 0 { return IntegrationOutcome() }
        var base = git_oid()
        let hasBase = git_merge_base(&base, pointer, &ours, &theirs) == 0
        if hasBase && git_oid_equal(&base, &theirs) != 0 { return IntegrationOutcome() }
        let pulled = try countCommits(from: theirs, excluding: ours)
        if hasBase && git_oid_equal(&base, &ours) != 0 {
            try checkout(commit: &theirs)
            try setReference(localReference, to: theirs, message: "ferry: fast-forward")
            return IntegrationOutcome(pulledCommits: pulled)
        }

        let ancestorTree = hasBase ? try tree(ofCommit: &base) : nil
        defer { git_tree_free(ancestorTree) }
        let ourTree = try tree(ofCommit: &ours)
        defer { git_tree_free(ourTree) }
        let theirTree = try tree(ofCommit: &theirs)
        defer { git_tree_free(theirTree) }
        var options = git_merge_options()
        try LibGit2.check(git_merge_options_init(&options, UInt32(GIT_MERGE_OPTIONS_VERSION)))
        // No rename detection: a rename is a delete and an add, so every conflict is about one path.
        options.flags = 0
        var index: OpaquePointer?
        try LibGit2.check(git_merge_trees(&index, pointer, ancestorTree, ourTree, theirTree, &options))
        defer { git_index_free(index) }

        var conflicts: [VaultConflict] = []
        for (ancestor, local, remote) in try conflictEntries(index!) {
            guard let path = local?.path ?? remote?.path ?? ancestor?.path else { continue }
            try LibGit2.check(git_index_conflict_remove(index, path))
            if let local { try add(local, at: local.path, to: index!) }
            guard let remote else {
                conflicts.append(VaultConflict(path: path, copyPath: nil, kind: .deletedRemotely))
                continue
            }
            let name = conflictName(path) { candidate in git_index_get_bypath(index, candidate, 0) != nil }
            try add(remote, at: name, to: index!)
            let kind: VaultConflict.Kind = local == nil ? (ancestor == nil ? .bothAdded : .deletedLocally) : (ancestor == nil ? .bothAdded : .bothModified)
            conflicts.append(VaultConflict(path: path, copyPath: name, kind: kind))
        }
        var treeID = git_oid()
        try LibGit2.check(git_index_write_tree_to(&treeID, index, pointer))
        let message = conflicts.isEmpty ? mergeMessage : mergeMessage + "\n\nConflicts (remote versions kept beside the local notes):\n"
            + conflicts.map { "  \($0.path)" + ($0.copyPath.map { " -> \($0)" } ?? " (deleted remotely, local kept)") }.joined(separator: "\n")
        var merge = try commit(tree: treeID, parents: [ours, theirs], message: message, author: author, updating: nil)
        try checkout(commit: &merge)
        try setReference(localReference, to: merge, message: "ferry: merge")
        return IntegrationOutcome(pulledCommits: pulled, conflicts: conflicts)
    }

    /// Every conflict of a merged index as (ancestor, ours, theirs), copied so the index can change afterwards.
    private func conflictEntries(_ index: OpaquePointer) throws(VaultError) -> [(ConflictSide?, ConflictSide?, ConflictSide?)] {
        guard git_index_has_conflicts(index) != 0 else { return [] }
        var iterator: OpaquePointer?
        try LibGit2.check(git_index_conflict_iterator_new(&iterator, index))
        defer { git_index_conflict_iterator_free(iterator) }
        var entries: [(ConflictSide?, ConflictSide?, ConflictSide?)] = []
        var ancestor: UnsafePointer<git_index_entry>?, ours: UnsafePointer<git_index_entry>?, theirs: UnsafePointer<git_index_entry>?
        while git_index_conflict_next(&ancestor, &ours, &theirs, iterator) == 0 {
            entries.append((ConflictSide(ancestor), ConflictSide(ours), ConflictSide(theirs)))
        }
        return entries
    }

    /// Adds `side`'s blob to `index` at `path` (stage 0).
    private func add(_ side: ConflictSide, at path: String, to index: OpaquePointer) throws(VaultError) {
        var entry = git_index_entry()
        entry.id = side.id
        entry.mode = side.mode
        let result = path.withCString { name in
            entry.path = name
            return git_index_add(index, &entry)
        }
        try LibGit2.check(result)
    }

    /// Checks out a commit's tree over the work tree, keeping local changes safe (libgit2's SAFE strategy).
    func checkout(commit oid: inout git_oid) throws(VaultError) {
        var commit: OpaquePointer?
        try LibGit2.check(git_commit_lookup(&commit, pointer, &oid))
        defer { git_commit_free(commit) }
        var options = git_checkout_options()
        try LibGit2.check(git_checkout_options_init(&options, UInt32(GIT_CHECKOUT_OPTIONS_VERSION)))
        options.checkout_strategy = GIT_CHECKOUT_SAFE.rawValue | GIT_CHECKOUT_RECREATE_MISSING.rawValue
        try LibGit2.check(git_checkout_tree(pointer, commit, &options))
    }

    /// How many commits are reachable from `tip` and not from `excluded`.
    func countCommits(from tip: git_oid, excluding excluded: git_oid?) throws(VaultError) -> Int {
        var walker: OpaquePointer?
        try LibGit2.check(git_revwalk_new(&walker, pointer))
        defer { git_revwalk_free(walker) }
        var start = tip
        try LibGit2.check(git_revwalk_push(walker, &start))
        if var hidden = excluded { try LibGit2.check(git_revwalk_hide(walker, &hidden)) }
        var count = 0
        var next = git_oid()
        while git_revwalk_next(&next, walker) == 0 { count += 1 }
        return count
    }
}
