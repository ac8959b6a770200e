import Crypto
import FerrySecurity
import Foundation

/// The server's signing secret and the API keys signed with it, kept in `<data-dir>/keys/` (mode 0600).
///
/// Every instance sharing a PostgreSQL database must share the secret: pass it with `--jwt-secret`
/// (`FERRY_JWT_SECRET`) or copy the data folder's `keys/` between instances.
public struct ServerKeys: Sendable {
    /// The HMAC secret that signs access tokens and the anon key, and derives refresh-token successors.
    let secret: [UInt8]
    /// The anon key clients send as `apikey`: a JWT with role `anon`.
    public let anonKey: String
    /// The service-role key a backend sends to reach every space through `/rest/v1`: a JWT with role `service_role`.
    /// A secret, like the signing secret: never shipped in an app.
    public let serviceRoleKey: String
    /// The `iss` every key of this deployment names.
    let issuer: String

    static let secretFile = "keys/jwt-secret"
    static let anonKeyFile = "keys/anon-key"
    static let serviceRoleKeyFile = "keys/service-role-key"

    /// The keys `configuration` names: its secret, or the data folder's (created on first use). Touches no database.
    public static func load(for configuration: ServerConfiguration) async throws(ServerStartupError) -> ServerKeys {
        try await loadOrCreate(
            dataDirectory: configuration.dataDirectory, configuredSecret: configuration.auth.jwtSecret, issuer: configuration.auth.issuer
        )
    }

    /// Loads the keys from `dataDirectory`, creating them on first start; `configuredSecret` wins over the file.
    static func loadOrCreate(
        dataDirectory: String, configuredSecret: String?, issuer: String
    ) async throws(ServerStartupError) -> ServerKeys {
        let folder = URL(filePath: dataDirectory)
        do {
            // The data folder and keys/ are the owner's only (0700), tightened if found looser.
            try OwnerOnlyPath.folder(dataDirectory)
            try OwnerOnlyPath.folder(folder.appending(path: "keys").path())
            for file in [secretFile, anonKeyFile, serviceRoleKeyFile] where FileManager.default.fileExists(atPath: folder.appending(path: file).path()) {
                try OwnerOnlyPath.file(folder.appending(path: file).path())
            }
            let secret: [UInt8]
            if let configuredSecret {
                guard configuredSecret.utf8.count >= 32 else {
                    throw ServerStartupError(.invalidConfiguration, "the JWT secret must be at least 32 characters")
                }
                secret = Array(configuredSecret.utf8)
            } else if FileManager.default.fileExists(atPath: folder.appending(path: secretFile).path()) {
                // Never replace an existing secret: that would sign everyone out and split instances.
                guard let stored = try? Data(contentsOf: folder.appending(path: secretFile)), stored.count >= 32 else {
                    throw ServerStartupError(
                        .dataDirectoryUnusable,
                        "\(dataDirectory)/\(secretFile) exists but cannot be read or is shorter than 32 bytes; fix its permissions or restore it"
                    )
                }
                secret = Array(stored)
            } else {
                secret = SecureRandom.bytes(64)
                try OwnerOnlyFile.write(Data(secret), to: folder.appending(path: secretFile))
            }
            let issuer = await TokenIssuer(secret: secret, issuer: issuer)
            // Each key is kept while it verifies under the secret (the secret may have been replaced), made anew otherwise.
            func key(role: String, file: String) async throws -> String {
                let url = folder.appending(path: file)
                if let stored = try? String(contentsOf: url, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines),
                   await issuer.verifyAPIKey(stored, role: role) {
                    return stored
                }
                let made = try await issuer.makeAPIKey(role: role)
                try OwnerOnlyFile.write(Data(made.utf8), to: url)
                return made
            }
            return ServerKeys(
                secret: secret, anonKey: try await key(role: "anon", file: anonKeyFile),
                serviceRoleKey: try await key(role: "service_role", file: serviceRoleKeyFile), issuer: issuer.issuer
            )
        } catch let error as ServerStartupError {
            throw error
        } catch {
            throw ServerStartupError(.dataDirectoryUnusable, "cannot create the server keys in \(dataDirectory)/keys: \(error.localizedDescription)")
        }
    }
}

extension ServerKeys {
    /// An API key's role.
    enum Role: String {
        case anon
        case serviceRole = "service_role"
    }

    /// The role of `key` when it is an API key of this deployment: one of this instance's own keys (compared in constant
    /// time), or any key signed with the same secret and issuer that has not expired, so instances sharing a secret accept
    /// each other's keys (each made its own before keys were derived from the secret; see docs/operations.md). `nil`
    /// for anything else.
    func role(ofKey key: String) -> Role? {
        // Both compared, whichever matches: the time does not tell which key was sent.
        let isAnon = ConstantTime.isEqual(key, anonKey), isServiceRole = ConstantTime.isEqual(key, serviceRoleKey)
        if isAnon { return .anon }
        if isServiceRole { return .serviceRole }
        guard key.utf8.count <= 2048 else { return nil }
        let parts = key.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let signature = Data(base64URLEncoded: String(parts[2])),
              let header = Data(base64URLEncoded: String(parts[0])),
              (try? JSONSerialization.jsonObject(with: header) as? [String: Any])?["alg"] as? String == "HS256"
        else { return nil }
        let signed = key.utf8.prefix(parts[0].utf8.count + 1 + parts[1].utf8.count)
        let expected = HMAC<SHA256>.authenticationCode(for: Array(signed), using: SymmetricKey(data: secret))
        guard ConstantTime.isEqual(Data(expected), signature),
              let payload = Data(base64URLEncoded: String(parts[1])),
              let claims = try? JSONSerialization.jsonObject(with: payload) as? [String: Any],
              claims["iss"] as? String == issuer, let exp = claims["exp"] as? Double, exp > Date().timeIntervalSince1970,
              let role = (claims["role"] as? String).flatMap(Role.init(rawValue:))
        else { return nil }
        return role
    }
}
