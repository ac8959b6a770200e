import Foundation

extension Vault {
    /// Lists `subfolder` (relative to the vault): child folders first, then notes. Hidden entries (`.git`,
    /// `.DS_Store`) are left out, and a folder never lists its parent.
    public func list(_ subfolder: String = "") throws -> VaultListing {
        let parts = subfolder.split(separator: "/").map(String.init)
        guard !parts.contains(".."), !subfolder.hasPrefix("/") else {
            throw VaultError(.invalidArgument, "'\(subfolder)' is not a folder inside the vault.")
        }
        let target = parts.reduce(folder) { $0.appending(path: $1, directoryHint: .isDirectory) }
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: target.path(percentEncoded: false))
        } catch let error as CocoaError where error.code == .fileReadNoPermission {
            throw VaultError(.permissionDenied, "Permission denied on '\(target.path(percentEncoded: false))': pick the vault folder again.")
        } catch {
            throw VaultError(.invalidArgument, "'\(subfolder)' is not a folder of the vault.")
        }
        var folders: [String] = [], notes: [String] = []
        for name in names where !name.hasPrefix(".") {
            var isFolder: ObjCBool = false
            _ = FileManager.default.fileExists(atPath: target.appending(path: name).path(percentEncoded: false), isDirectory: &isFolder)
            if isFolder.boolValue { folders.append(name) } else { notes.append(name) }
        }
        let order: (String, String) -> Bool = { $0.compare($1, options: [.caseInsensitive, .numeric]) == .orderedAscending }
        return VaultListing(folder: parts.joined(separator: "/"), folders: folders.sorted(by: order), notes: notes.sorted(by: order))
    }
}
