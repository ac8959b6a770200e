import Logging
import CLibGit2
import Foundation

extension Vault {
    /// Syncs the vault: stage all → commit → fetch → merge → push, the same for every entry point.
    ///
    /// Non-overlapping text changes merge line by line. Where both sides changed the same lines (or one deleted
    /// what the other edited) the local note keeps its content and the remote version is written beside it,
    /// named with the remote's host and time; both are committed and listed in ``VaultSyncReport/conflicts``. No
    /// conflict marker is ever written. An `index.lock` older than ``SyncOptions/staleLockAge`` is removed first.
    public func sync(_ options: SyncOptions = SyncOptions()) async throws -> VaultSyncReport {
        let vault = self
        return try await Self.offPool { try vault.syncNow(options) }
    }

    /// The blocking body of ``sync(_:)``.
    func syncNow(_ options: SyncOptions) throws -> VaultSyncReport {
        try checkFolderAccess()
        guard let location = discoverRepository().location else {
            throw VaultError(.repositoryMissing, "The vault has no git repository yet; run 'ferry vault init' or 'ferry vault clone URL PATH'.")
        }
        let repository = try GitRepository.open(gitDirectory: location.gitDirectory, workTree: folder)
        let lock = try SyncLock(gitDirectory: repository.gitDirectory)
        defer { lock.release() }
        var report = VaultSyncReport()
        report.recoveredStaleLock = try recoverStaleIndexLock(in: repository.gitDirectory, options: options)
        let settings = try profile.settingsStore.load()

        let changed = try repository.stageAll()
        if !changed.isEmpty {
            let message = CommitMessageTemplate(settings.commitMessageTemplate).render(files: changed, hostname: options.hostname, date: options.now())
            _ = try repository.commitIndex(message: message + "\n\nFerry-Host: \(options.hostname)\n", author: settings.author)
            report.committedFiles = changed
        }

        report.origin = try resolveOrigin(repositoryOrigin: repository.config("remote.origin.url"), writeBack: true)
        guard let origin = report.origin.url else {
            profile.logger.notice("sync without origin: committed locally only", metadata: ["ferry.vault.path": "\(path)"])
            return report
        }
        if repository.config("remote.origin.url") != origin { try repository.setRemote("origin", url: origin) }
        let credentials = try profile.credentialStore.load()
        var branch = try repository.currentBranch()
        var round = 1
        while true {
            let outcome = try pullRound(repository, branch: &branch, credentials: credentials, author: settings.author, options: options)
            report.pulledCommits += outcome.pulledCommits
            report.conflicts += outcome.conflicts
            let pushed: Int?
            do {
                pushed = try pushIfAhead(repository, branch: branch, credentials: credentials, options: options)
            } catch let error as VaultError {
                guard error.code == .rejectedNonFastForward, round < options.maxPushRounds else { throw error }
                profile.logger.info("push raced another device; fetching again", metadata: ["ferry.vault.round": "\(round)"])
                round += 1
                continue
            }
            report.pushedCommits += pushed ?? 0
            break
        }
        profile.logger.info("vault synced", metadata: ["ferry.vault.path": "\(path)", "ferry.vault.summary": "\(report.summary)"])
        return report
    }

    /// Fetches and integrates the remote branch (adopting the remote's branch on a repository without commits).
    private func pullRound(
        _ repository: GitRepository, branch: inout String, credentials: VaultCredentials, author: VaultAuthor, options: SyncOptions
    ) throws -> IntegrationOutcome {
        try repository.fetch("origin", session: RemoteSession(credentials: credentials, maxAttempts: options.maxAuthenticationAttempts))
        if repository.isHeadUnborn { branch = try adoptRemoteBranch(repository, preferred: branch) }
        let remoteReference = "refs/remotes/origin/\(branch)"
        let remoteSide = repository.commitID(of: remoteReference).map { remoteIdentity(repository, commit: $0) }
        let host = remoteSide?.host ?? "remote"
        let date = remoteSide?.date ?? options.now()
        let hostname = options.hostname
        return try repository.integrate(
            remoteReference: remoteReference, branch: branch, author: author,
            mergeMessage: "Merge origin/\(branch) on \(hostname)\n\nFerry-Host: \(hostname)\n"
        ) { path, exists in
            Self.conflictCopyName(for: path, host: host, date: date, exists: exists)
        }
    }

    /// Pushes when the local branch has commits the remote lacks; returns how many, `nil` when nothing was pushed.
    private func pushIfAhead(_ repository: GitRepository, branch: String, credentials: VaultCredentials, options: SyncOptions) throws -> Int? {
        guard var local = repository.commitID(of: "refs/heads/\(branch)") else { return nil }
        let remote = repository.commitID(of: "refs/remotes/origin/\(branch)")
        if var remoteID = remote, git_oid_equal(&local, &remoteID) != 0 { return nil }
        let ahead = try repository.countCommits(from: local, excluding: remote)
        try repository.push(branch: branch, to: "origin", session: RemoteSession(credentials: credentials, maxAttempts: options.maxAuthenticationAttempts))
        return ahead
    }

    /// The name of the copy holding the remote version of `path`: `idea (conflict from HOST 2026-11-21 19.30.12).md`.
    ///
    /// The host comes from the remote commit, which anyone who can push writes: it loses control characters and the
    /// characters file systems refuse, and is cut to 64 bytes; a long note name is cut too, so the copy's name stays
    /// within the 255 bytes a file name may have.
    static func conflictCopyName(for path: String, host: String, date: Date, exists: (String) -> Bool) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd HH.mm.ss"
        let cleanHost = String(String.UnicodeScalarView(host.unicodeScalars.map { scalar in
            scalar.properties.generalCategory == .control || "/\\:*?\"<>|".unicodeScalars.contains(scalar) ? "-" : scalar
        })).trimmingCharacters(in: .whitespaces).prefix(utf8Bytes: 64)
        let safeHost = cleanHost.isEmpty ? "another device" : cleanHost
        let slash = path.lastIndex(of: "/")
        let folder = slash.map { String(path[...$0]) } ?? ""
        let name = slash.map { String(path[path.index(after: $0)...]) } ?? path
        // An extension is short: after a dot far from the end ("Dr. Smith …") the rest is the note's title.
        let dot = name.lastIndex(of: ".").flatMap { $0 == name.startIndex || name[$0...].utf8.count > 16 ? nil : $0 }
        let ext = dot.map { String(name[$0...]) } ?? ""
        let suffix = " (conflict from \(safeHost) \(formatter.string(from: date)))"
        // Room for the suffix, the extension and a number (" 12345").
        let stem = (dot.map { String(name[..<$0]) } ?? name).prefix(utf8Bytes: max(1, 255 - suffix.utf8.count - ext.utf8.count - 6))
        let base = "\(folder)\(stem)\(suffix)"
        var candidate = base + ext
        var number = 2
        while exists(candidate) {
            candidate = "\(base) \(number)\(ext)"
            number += 1
        }
        return candidate
    }

    /// The host (from the `Ferry-Host:` trailer, else the committer's name) and time of the remote tip.
    private func remoteIdentity(_ repository: GitRepository, commit: git_oid) -> (host: String, date: Date) {
        let committer = repository.committer(ofCommit: commit)
        let trailer = repository.message(ofCommit: commit).split(whereSeparator: \.isNewline)
            .last { $0.hasPrefix("Ferry-Host:") }
            .map { $0.dropFirst("Ferry-Host:".count).trimmingCharacters(in: .whitespaces) }
        return (trailer ?? committer.name, committer.date)
    }

    /// On a repository without commits, points HEAD at the remote's branch: the same name when it exists,
    /// else `main`, `master` or the only branch.
    private func adoptRemoteBranch(_ repository: GitRepository, preferred: String) throws(VaultError) -> String {
        if repository.commitID(of: "refs/remotes/origin/\(preferred)") != nil { return preferred }
        let names = (try? FileManager.default.contentsOfDirectory(atPath: repository.gitDirectory.appending(path: "refs/remotes/origin").path(percentEncoded: false))) ?? []
        let packed = (try? String(contentsOf: repository.gitDirectory.appending(path: "packed-refs"), encoding: .utf8)) ?? ""
        let packedNames = packed.split(whereSeparator: \.isNewline).compactMap { line -> String? in
            guard let range = line.range(of: "refs/remotes/origin/") else { return nil }
            return String(line[range.upperBound...])
        }
        let branches = Set(names + packedNames).subtracting(["HEAD"]).sorted()
        guard let chosen = ["main", "master"].first(where: branches.contains) ?? (branches.count == 1 ? branches.first : nil) else {
            return preferred
        }
        try LibGit2.check(git_repository_set_head(repository.pointer, "refs/heads/\(chosen)"))
        return chosen
    }

    /// Removes `index.lock` when it is older than the stale age (a crashed run); a fresh one means another git
    /// process is working, and sync fails with ``VaultError/Code/repositoryLocked``.
    private func recoverStaleIndexLock(in gitDirectory: URL, options: SyncOptions) throws(VaultError) -> Bool {
        let lock = gitDirectory.appending(path: "index.lock")
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: lock.path(percentEncoded: false)) else { return false }
        let modified = (attributes[.modificationDate] as? Date) ?? .distantPast
        let age = options.now().timeIntervalSince(modified)
        let staleSeconds = Double(options.staleLockAge.components.seconds)
        guard age >= staleSeconds else {
            throw VaultError(.repositoryLocked,
                "The repository is locked by another git process (index.lock is \(Int(age)) s old). Wait for it to finish; a lock left by a crash is cleared after \(Int(staleSeconds)) s.")
        }
        do {
            try FileManager.default.removeItem(at: lock)
        } catch {
            throw VaultError(.permissionDenied, "A stale index.lock cannot be removed: \(error.localizedDescription). Pick the folder again.")
        }
        profile.logger.warning("removed stale index.lock", metadata: ["ferry.vault.lock.age": "\(Int(age))"])
        return true
    }
}

extension String {
    /// The longest prefix of at most `limit` UTF-8 bytes that ends on a character boundary.
    func prefix(utf8Bytes limit: Int) -> String {
        guard utf8.count > limit else { return self }
        var end = startIndex, used = 0
        for index in indices {
            let width = self[index].utf8.count
            guard used + width <= limit else { break }
            used += width
            end = self.index(after: index)
        }
        return String(self[..<end])
    }
}
