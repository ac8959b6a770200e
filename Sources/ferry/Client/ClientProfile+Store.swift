import FerryClient
import FerryCore
import FerrySecurity
import Foundation

/// The profile's local data: `store.sqlite` and the server's schema cached in `schema.json`.
extension ClientProfile {
    var storeFile: URL { folder.appending(path: "store.sqlite") }
    var schemaFile: URL { folder.appending(path: "schema.json") }

    /// The user id of the saved session: the personal space's id.
    func signedInUserID() throws -> UUID {
        guard let session = try FileSessionStore(fileURL: folder.appending(path: "session.json")).load() else {
            throw CommandFailure(message: "Nobody is signed in on this profile: run 'ferry login EMAIL' first.", code: .notSignedIn)
        }
        return session.user.id
    }

    /// The schema fetched by the last `ferry sync`, or `nil`.
    func cachedSchema() throws -> Schema? {
        guard let data = try? Data(contentsOf: schemaFile) else { return nil }
        do {
            return try JSONDecoder().decode(Schema.self, from: data)
        } catch {
            throw CommandFailure(message: "the cached schema \(schemaFile.path()) is unreadable; run 'ferry sync' to fetch it again")
        }
    }

    func saveSchema(_ schema: Schema) throws {
        try OwnerOnlyPath.folder(folder.path())
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        try OwnerOnlyFile.write(try encoder.encode(schema), to: schemaFile)
    }

    /// Opens the local store with `schema`, or with the cached schema; the personal space is the default space.
    func openStore(schema: Schema? = nil) throws -> LocalStore {
        let userID = try signedInUserID()
        guard let schema = try schema ?? cachedSchema() else {
            throw CommandFailure(message: "this profile does not know the server's collections yet: run 'ferry sync' once (online), then retry")
        }
        try OwnerOnlyPath.folder(folder.path())
        let savedID = savedDeviceID()
        let store = try LocalStore(fileURL: storeFile, schema: schema, defaultSpace: userID, deviceId: savedID)
        if store.deviceId != savedID { try saveDeviceID(store.deviceId) }
        if let owner = try store.creationDefaultSpace(), owner != userID {
            throw CommandFailure(message: "this profile's local data belongs to another account: run 'ferry reset', or use another --profile")
        }
        return store
    }
}

extension ClientProfile {
    /// Fetches and caches the server's schema after a sign-in, so data commands work before the first sync.
    /// Best effort: a server without the sync routes, or no network, leaves it to `ferry sync`.
    func cacheSchemaQuietly(using auth: AuthClient) async {
        guard let schema = try? await SyncClient(auth: auth).schema() else { return }
        try? saveSchema(schema)
    }
}

extension ClientProfile {
    /// `device.id`, beside `device.key`: the profile stays one device to the server (and keeps its trust) when
    /// `ferry reset` deletes the store, as the key pair does.
    var deviceIDFile: URL { folder.appending(path: "device.id") }

    func savedDeviceID() -> UUID? {
        (try? String(contentsOf: deviceIDFile, encoding: .utf8)).flatMap { UUID(uuidString: $0.trimmingCharacters(in: .whitespacesAndNewlines)) }
    }

    func saveDeviceID(_ id: UUID) throws {
        try OwnerOnlyFile.write(Data((id.lowercasedText + "\n").utf8), to: deviceIDFile)
    }
}

extension ClientProfile {
    /// Deletes the local store (with its WAL files) and the cached schema: part of the debug reset.
    func removeLocalData() {
        for file in [storeFile.path(), storeFile.path() + "-wal", storeFile.path() + "-shm", schemaFile.path()] {
            try? FileManager.default.removeItem(atPath: file)
        }
    }
}
