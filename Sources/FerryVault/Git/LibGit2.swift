import CLibGit2
import Foundation

/// The process-wide libgit2 initialisation and the translation of its return codes into ``VaultError``.
enum LibGit2 {
    private static let initialised: Bool = {
        git_libgit2_init()
        return true
    }()

    /// Initialises libgit2 once per process (`git_libgit2_init`); every entry point calls this first.
    static func ensureInitialised() {
        _ = initialised
    }

    /// Throws the mapped ``VaultError`` when `result` is negative.
    static func check(_ result: Int32, _ context: GitErrorContext = .local) throws(VaultError) {
        guard result < 0 else { return }
        throw lastError(result, context)
    }

    /// The last libgit2 error of this thread, mapped.
    static func lastError(_ result: Int32, _ context: GitErrorContext = .local) -> VaultError {
        let last = git_error_last()
        let message = last.flatMap { $0.pointee.message.map { String(cString: $0) } } ?? "libgit2 error \(result)"
        let errorClass = last.map { Int32($0.pointee.klass) } ?? 0
        return VaultError.mapped(GitFailure(code: result, errorClass: errorClass, message: message), context: context)
    }

    /// The version libgit2 reports, such as `1.5.1`.
    static var version: String {
        var major: Int32 = 0, minor: Int32 = 0, revision: Int32 = 0
        git_libgit2_version(&major, &minor, &revision)
        return "\(major).\(minor).\(revision)"
    }
}
