import FerryClient
import FerryCore
import FerrySecurity
import FerryServer
import FerryTesting
import Foundation

/// A device of the encrypted-space tests: a session, a store, its own X25519 key pair and an engine that can read
/// and write encrypted spaces. Syncs run by hand.
struct EncryptedDevice {
    let auth: AuthClient
    let client: SyncClient
    let store: LocalStore
    let keys: DeviceKeyPair
    let engine: SyncEngine
    let name: String

    static func signIn(_ server: LiveServer, email: String, signUp: Bool, name: String) async throws -> EncryptedDevice {
        let account = try await SignedInAccount.open(server.baseURL, apiKey: server.server.keys.anonKey, email: email, signUp: signUp)
        let (client, store, keys) = (account.client, account.store, DeviceKeyPair.generate())
        let engine = SyncEngine(
            store: store, remote: client, encryption: EndToEndEncryption(deviceKeys: keys, remote: client),
            configuration: .manualSync(localChangeDebounce: .seconds(3600))
        )
        return EncryptedDevice(auth: account.auth, client: client, store: store, keys: keys, engine: engine, name: name)
    }

    var id: UUID { store.deviceId }

    /// A new account's first (trusted) device, signed up with an email made from `prefix`, and an encrypted space
    /// it created and synced.
    static func ownerWithEncryptedSpace(_ server: LiveServer, prefix: String) async throws -> (owner: EncryptedDevice, email: String, space: UUID) {
        let email = uniqueEmail(prefix)
        let owner = try await signIn(server, email: email, signUp: true, name: "mac")
        _ = await owner.postLogin().run()
        let space = try owner.store.queueSpace(CreateSpaceRequest(name: "Agent sessions", encrypted: true))
        try await owner.sync()
        return (owner, email, space)
    }

    func postLogin(deviceRemote: (any DeviceRemote)? = nil) -> PostLoginSync {
        PostLoginSync(
            store: store, syncRemote: client, deviceRemote: deviceRemote ?? client, deviceKeys: keys,
            device: DeviceRegistration(name: name, type: .linux, hostname: "test-\(name)", publicKey: keys.publicKeyBase64)
        )
    }

    /// One sync with the engine running for just that long.
    @discardableResult
    func sync() async throws -> SyncReport {
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await engine.run() }
            defer { group.cancelAll() }
            return try await engine.sync()
        }
    }

    /// The plaintext sessions this device holds in `space`, by id.
    func sessions(in space: UUID) throws -> [UUID: [String: JSONValue]] {
        Dictionary(uniqueKeysWithValues: try store.fetchAll(collection: "agent_coding_sessions").filter { $0.space == space }.map { ($0.id, $0.fields) })
    }

    /// The space key of `version`, opened from the row the server holds for this device.
    func spaceKey(_ space: UUID, version: Int) async throws -> SpaceKey? {
        guard let row = try await client.secrets().secrets.first(where: { $0.spaceId == space && $0.keyVersion == version }) else { return nil }
        let sealed = try SealedSpaceKey(keyVersion: version, encapsulatedKeyBase64: row.enc, ciphertextBase64: row.ciphertext)
        return try SpaceKeySealer.open(sealed, spaceID: space, deviceID: id, with: keys)
    }
}

/// Records of the Unbound example (the coding-agent companion) whose text fields carry a marker a database scan looks for.
enum UnboundRecords {
    /// Writes a repository and `count` sessions into `space` on `store`; returns the sessions' ids.
    @discardableResult
    static func write(_ count: Int, into space: UUID, on store: LocalStore, marker: String) throws -> [UUID] {
        let repository = try store.save(collection: "repositories", space: space, fields: [
            "name": .string("repo \(marker)"), "local_path": .string("/Users/ada/\(marker)"), "status": "active",
        ])
        return try (0..<count).map { index in
            try store.save(collection: "agent_coding_sessions", space: space, fields: [
                "repository_id": .string(repository.id.uuidString), "status": .string("running \(marker) \(index)"),
                "is_worktree": .bool(index % 2 == 0), "worktree_path": .string("/worktrees/\(marker)/\(index)"),
                "created_at": "2026-11-21T10:00:00Z",
            ]).id
        }
    }
}
