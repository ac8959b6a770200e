import Crypto
import FerrySecurity
import Foundation

/// Finds a vault's repository, inline or in the profile's git storage.
///
/// libgit2 finds `<vault>/.git` by itself but not a git folder kept elsewhere whose `core.worktree` is the vault;
/// this does, in the seed's order: inline `.git` (folder or file) → `<storage>/<key>.git` → legacy names →
/// a scan of every repository in the storage.
public struct RepositoryLocator: Sendable {
    /// The profile's git storage folder.
    public var storage: URL

    /// Creates a locator over `storage`.
    public init(storage: URL) {
        self.storage = storage
    }

    /// The vault's storage key: its folder name and a hash of its absolute path, e.g. `Notes-3f2a9c0d1e4b`.
    public static func storageKey(for vault: URL) -> String {
        "\(sanitisedName(of: vault))-\(pathHash(of: vault).prefix(12))"
    }

    /// Where Ferry keeps a separate repository for `vault`.
    public func storageLocation(for vault: URL) -> URL {
        storage.appending(path: "\(Self.storageKey(for: vault)).git", directoryHint: .isDirectory)
    }

    /// Legacy names earlier versions used, in the order they are tried.
    public func legacyLocations(for vault: URL) -> [URL] {
        let key = Self.storageKey(for: vault), name = Self.sanitisedName(of: vault)
        return ["\(key) - \(vault.lastPathComponent).git", "\(name).git", "\(Self.pathHash(of: vault)).git"]
            .map { storage.appending(path: $0, directoryHint: .isDirectory) }
    }

    /// Finds the repository of `vault`.
    public func locate(vault: URL) -> RepositoryDiscovery {
        var candidates: [String] = []
        let stored = storedRepositories()
        func found(_ url: URL, _ kind: RepositoryLocation.Kind) -> RepositoryDiscovery {
            RepositoryDiscovery(location: RepositoryLocation(gitDirectory: url, kind: kind), candidates: candidates, storageRepositoryCount: stored.count)
        }

        let dotGit = vault.appending(path: ".git")
        candidates.append(dotGit.path(percentEncoded: false))
        var isFolder: ObjCBool = false
        if FileManager.default.fileExists(atPath: dotGit.path(percentEncoded: false), isDirectory: &isFolder) {
            if isFolder.boolValue, Self.isGitDirectory(dotGit) { return found(dotGit, .inline) }
            if !isFolder.boolValue, let target = Self.gitFileTarget(dotGit, vault: vault), Self.isGitDirectory(target) {
                return found(target, .gitFile)
            }
        }
        let primary = storageLocation(for: vault)
        candidates.append(primary.path(percentEncoded: false))
        if Self.isGitDirectory(primary), Self.workTree(of: primary).map({ Self.samePath($0, vault) }) ?? false {
            return found(primary, .storage)
        }
        for legacy in legacyLocations(for: vault) {
            candidates.append(legacy.path(percentEncoded: false))
            guard Self.isGitDirectory(legacy) else { continue }
            // A legacy name belongs to this vault unless it says it serves another folder.
            if Self.workTree(of: legacy).map({ Self.samePath($0, vault) }) ?? true { return found(legacy, .legacy) }
        }
        for repository in stored where !candidates.contains(repository.path(percentEncoded: false)) {
            candidates.append(repository.path(percentEncoded: false))
            if let tree = Self.workTree(of: repository), Self.samePath(tree, vault) { return found(repository, .scan) }
        }
        return RepositoryDiscovery(location: nil, candidates: candidates, storageRepositoryCount: stored.count)
    }

    /// The git folders directly inside the storage, sorted by name.
    public func storedRepositories() -> [URL] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: storage.path(percentEncoded: false))) ?? []
        return names.sorted()
            .map { storage.appending(path: $0, directoryHint: .isDirectory) }
            .filter { Self.isGitDirectory($0) }
    }

    /// Whether `url` looks like a git folder (a `HEAD` file and an `objects` folder).
    static func isGitDirectory(_ url: URL) -> Bool {
        let manager = FileManager.default
        return manager.fileExists(atPath: url.appending(path: "HEAD").path(percentEncoded: false)) && manager.fileExists(atPath: url.appending(path: "objects").path(percentEncoded: false))
    }

    /// The target of a `.git` file (`gitdir: PATH`, relative to the vault when not absolute).
    static func gitFileTarget(_ file: URL, vault: URL) -> URL? {
        guard let text = try? String(contentsOf: file, encoding: .utf8),
              let line = text.split(whereSeparator: \.isNewline).first, line.hasPrefix("gitdir:") else { return nil }
        let path = line.dropFirst("gitdir:".count).trimmingCharacters(in: .whitespaces)
        return path.hasPrefix("/") ? URL(filePath: path, directoryHint: .isDirectory) : vault.appending(path: path, directoryHint: .isDirectory)
    }

    /// A git folder's `core.worktree`, resolved against the git folder when relative.
    static func workTree(of gitDirectory: URL) -> URL? {
        guard let path = GitRepository.configuredWorkTree(ofGitDirectory: gitDirectory) else { return nil }
        return path.hasPrefix("/") ? URL(filePath: path, directoryHint: .isDirectory) : gitDirectory.appending(path: path, directoryHint: .isDirectory)
    }

    /// Whether two file URLs name the same folder (symbolic links and trailing slashes aside).
    static func samePath(_ lhs: URL, _ rhs: URL) -> Bool {
        canonicalPath(lhs) == canonicalPath(rhs)
    }

    /// The absolute path with symbolic links resolved and no trailing slash.
    static func canonicalPath(_ url: URL) -> String {
        var path = url.standardizedFileURL.resolvingSymlinksInPath().path(percentEncoded: false)
        while path.count > 1 && path.hasSuffix("/") { path.removeLast() }
        return path
    }

    private static func sanitisedName(of vault: URL) -> String {
        let name = String(vault.lastPathComponent.map { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" ? $0 : "-" })
        return name.isEmpty ? "vault" : name
    }

    private static func pathHash(of vault: URL) -> String {
        ContentHasher.sha256(canonicalPath(vault))
    }
}
