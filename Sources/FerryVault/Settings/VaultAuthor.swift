/// The name and email on sync commits.
public struct VaultAuthor: Sendable, Hashable, Codable {
    /// The author's name.
    public var name: String
    /// The author's email.
    public var email: String

    /// Creates an author.
    public init(name: String, email: String) {
        self.name = name
        self.email = email
    }

    /// `Ferry <ferry@localhost>`.
    public static let `default` = VaultAuthor(name: "Ferry", email: "ferry@localhost")
}
