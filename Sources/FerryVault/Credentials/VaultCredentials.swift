/// What a vault authenticates with: an HTTPS token (sent as the password) and/or an SSH key.
public struct VaultCredentials: Sendable, Hashable, Codable {
    /// An SSH key pair on disk.
    public struct SSHKey: Sendable, Hashable, Codable {
        /// The private key file.
        public var privateKeyPath: String
        /// The public key file; `nil` lets libssh2 derive it.
        public var publicKeyPath: String?
        /// The key's passphrase, if it has one.
        public var passphrase: String?

        /// Creates a key reference.
        public init(privateKeyPath: String, publicKeyPath: String? = nil, passphrase: String? = nil) {
            self.privateKeyPath = privateKeyPath
            self.publicKeyPath = publicKeyPath
            self.passphrase = passphrase
        }

        enum CodingKeys: String, CodingKey {
            case privateKeyPath = "private_key_path"
            case publicKeyPath = "public_key_path"
            case passphrase
        }
    }

    /// The HTTPS token (a GitHub OAuth token or a personal access token), sent as the password.
    public var token: String?
    /// The HTTPS user name; `nil` uses the URL's, else `x-access-token` (what GitHub expects with a token).
    public var username: String?
    /// The SSH key for `ssh://` and `git@host:` origins.
    public var sshKey: SSHKey?

    /// Creates credentials.
    public init(token: String? = nil, username: String? = nil, sshKey: SSHKey? = nil) {
        self.token = token
        self.username = username
        self.sshKey = sshKey
    }

    /// Whether nothing is stored.
    public var isEmpty: Bool { token == nil && sshKey == nil }

    enum CodingKeys: String, CodingKey {
        case token, username
        case sshKey = "ssh_key"
    }
}

extension VaultCredentials: CustomStringConvertible {
    /// Says what is stored, never the token itself.
    public var description: String {
        "VaultCredentials(token: \(token == nil ? "none" : "set"), ssh key: \(sshKey?.privateKeyPath ?? "none"))"
    }
}
