import Foundation

/// Writes files that hold credentials: mode 0600 from creation (no moment where another user could
/// read them), replaced atomically so a crash leaves the old file or the new one, never half of one.
public enum OwnerOnlyFile {
    /// The file's bytes, or `nil` when there is no file (any other failure is thrown).
    public static func read(_ url: URL) throws -> Data? {
        do {
            return try Data(contentsOf: url)
        } catch let error as CocoaError where error.code == .fileReadNoSuchFile {
            return nil
        }
    }

    /// Replaces the file at `url` with `data`, creating its folder (mode 0700) when missing.
    public static func write(_ data: Data, to url: URL) throws {
        try withTemporaryCopy(of: data, beside: url) { temporary in
            guard rename(temporary.path(), url.path()) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        }
    }

    /// Creates the file at `url` with `data`, creating its folder (mode 0700) when missing, only if no file is there.
    ///
    /// Returns `false`, leaving the existing file untouched, when another writer created it first: two processes
    /// racing to create a key file end up sharing the first one's key instead of overwriting each other.
    public static func create(_ data: Data, at url: URL) throws -> Bool {
        var created = false
        try withTemporaryCopy(of: data, beside: url) { temporary in
            if link(temporary.path(), url.path()) == 0 {
                created = true
            } else if errno != EEXIST {
                throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
            }
            unlink(temporary.path())
        }
        return created
    }

    /// Writes `data` to a new 0600 temporary file in `url`'s folder, hands it to `body`, and removes it if `body` throws.
    private static func withTemporaryCopy(of data: Data, beside url: URL, _ body: (URL) throws -> Void) throws {
        let folder = url.deletingLastPathComponent()
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let temporary = folder.appending(path: ".\(url.lastPathComponent).\(UUID().uuidString)")
        let descriptor = open(temporary.path(), O_WRONLY | O_CREAT | O_EXCL, 0o600)
        guard descriptor >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
        do {
            try handle.write(contentsOf: data)
            try handle.synchronize()
            try handle.close()
            try body(temporary)
        } catch {
            unlink(temporary.path())
            throw error
        }
    }
}
