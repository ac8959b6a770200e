/// One libgit2 failure as returned: the negative code, the error class and libgit2's message.
public struct GitFailure: Sendable, Hashable {
    /// The negative return code (`GIT_EAUTH`, `GIT_ELOCKED`, …).
    public var code: Int32
    /// The `git_error_t` class (`GIT_ERROR_NET`, `GIT_ERROR_OS`, …).
    public var errorClass: Int32
    /// libgit2's message.
    public var message: String

    /// Creates a failure description.
    public init(code: Int32, errorClass: Int32, message: String) {
        self.code = code
        self.errorClass = errorClass
        self.message = message
    }
}
