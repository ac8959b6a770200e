import FerryCore
import FerrySecurity
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Keeps the session in a JSON file that only its owner can read (mode 0600), replaced atomically on save.
///
/// The file is created 0600 before any byte of the session is written, in a folder created 0700, and
/// renamed over the old file (`OwnerOnlyFile`), so a crash leaves either the old session or
/// the new one, never half of one.
/// This is the store for Linux, the CLI and tests; Apple apps use `KeychainSessionStore`.
public struct FileSessionStore: SessionStore {
    /// The session file, e.g. `~/.config/ferry/session.json`.
    public var fileURL: URL

    /// Creates a store that keeps the session in `fileURL`.
    public init(fileURL: URL) {
        self.fileURL = fileURL
    }

    /// Reads the session file, or `nil` when there is none; throws `session_store_failed` when it is unreadable.
    public func load() throws -> AuthSession? {
        let data: Data
        do {
            guard let contents = try OwnerOnlyFile.read(fileURL) else { return nil }
            data = contents
        } catch {
            throw AuthError(code: .sessionStoreFailed, message: "Could not read the session file \(fileURL.path): \(error.localizedDescription).")
        }
        do {
            return try JSONDecoder().decode(AuthSession.self, from: data)
        } catch {
            throw AuthError(
                code: .sessionStoreFailed,
                message: "The session file \(fileURL.path) is not a saved session; delete it and sign in again."
            )
        }
    }

    /// Replaces the session file atomically with `session`, mode 0600.
    public func save(_ session: AuthSession) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        do {
            try OwnerOnlyFile.write(try encoder.encode(session), to: fileURL)
        } catch {
            throw AuthError(code: .sessionStoreFailed, message: "Could not save the session to \(fileURL.path): \(error.localizedDescription).")
        }
    }

    /// Deletes the session file; succeeds when there is none.
    public func delete() throws {
        guard unlink(fileURL.path) == 0 || errno == ENOENT else {
            let reason = String(cString: strerror(errno))
            throw AuthError(code: .sessionStoreFailed, message: "Could not delete the session file \(fileURL.path): \(reason).")
        }
    }
}
