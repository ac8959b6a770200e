import FerryCore
import FerrySecurity
import FerryServer
import FerryTesting
import Foundation

/// A ``SyncDevice`` with its own X25519 key pair, talking to `/sync/v1/devices` and `/sync/v1/secrets`.
struct KeyedDevice {
    var sync: SyncDevice
    let keys = DeviceKeyPair.generate()

    var id: UUID { sync.deviceID }
    var path: String { "/sync/v1/devices/\(id.uuidString.lowercased())" }

    static func signUp(_ server: any ServerUnderTest, _ name: String = "user") async throws -> KeyedDevice {
        KeyedDevice(sync: try await SyncDevice.signUp(server, name, bound: false))
    }

    /// An account with a trusted laptop (its first device) and a phone the laptop approved.
    static func household(_ server: any ServerUnderTest) async throws -> (laptop: KeyedDevice, phone: KeyedDevice) {
        let laptop = try await signUp(server)
        try await laptop.registered()
        let phone = try await laptop.sibling()
        try await phone.registered()
        let approval = try await laptop.trust(phone)
        guard approval.status == 200 else { throw AuthHarness.HarnessError(reply: approval) }
        return (laptop, phone)
    }

    /// Another device (new id, new key, new session) of the same account.
    func sibling() async throws -> KeyedDevice {
        KeyedDevice(sync: try await sync.sibling(bound: false))
    }

    func registration(name: String = "Test device", type: DeviceKind = .linux, pushToken: String? = nil) -> DeviceRegistration {
        DeviceRegistration(name: name, type: type, hostname: "host.local", publicKey: keys.publicKeyBase64, pushToken: pushToken)
    }

    /// `PUT /sync/v1/devices/{id}` with this device's key.
    func register(name: String = "Test device", pushToken: String? = nil) async throws -> HTTPClient.Reply {
        try await sync.register(registration(name: name, pushToken: pushToken), keys: keys)
    }

    /// Registers and returns the stored device.
    @discardableResult
    func registered(name: String = "Test device") async throws -> Device {
        let reply = try await register(name: name)
        guard reply.status == 200 || reply.status == 201 else { throw AuthHarness.HarnessError(reply: reply) }
        return try JSONDecoder().decode(Device.self, from: reply.body)
    }

    func devices() async throws -> [Device] {
        try sync.auth.decode(try await sync.get("/sync/v1/devices"), as: DeviceList.self).devices
    }

    func trust(_ other: KeyedDevice) async throws -> HTTPClient.Reply {
        try await sync.auth.send("POST", other.path + "/trust", token: sync.session.accessToken)
    }

    func revoke(_ other: KeyedDevice) async throws -> HTTPClient.Reply {
        try await sync.auth.send("POST", other.path + "/revoke", token: sync.session.accessToken)
    }

    func secrets() async throws -> SecretsState {
        try sync.auth.decode(try await sync.get("/sync/v1/secrets"))
    }

    func store(_ secrets: [SealedSecret]) async throws -> HTTPClient.Reply {
        try await sync.send("PUT", "/sync/v1/secrets", StoreSecretsRequest(secrets: secrets))
    }

    /// Stores rows and returns each row's result.
    func stored(_ secrets: [SealedSecret]) async throws -> [SecretResult] {
        try sync.auth.decode(try await store(secrets), as: StoreSecretsResponse.self).results
    }

    /// `key` sealed to `recipient` for `space`, as a row to store.
    func seal(_ key: SpaceKey, space: UUID, to recipient: KeyedDevice) throws -> SealedSecret {
        let sealed = try SpaceKeySealer.seal(key, spaceID: space, to: recipient.keys.publicKey, deviceID: recipient.id)
        return SealedSecret(
            spaceId: space, deviceId: recipient.id, keyVersion: key.version,
            enc: sealed.encapsulatedKeyBase64, ciphertext: sealed.ciphertextBase64
        )
    }

    /// Opens the row of `space` and `version` sealed to this device.
    func openKey(space: UUID, version: Int) async throws -> SpaceKey? {
        guard let row = try await secrets().secrets.first(where: { $0.spaceId == space && $0.keyVersion == version }) else { return nil }
        let sealed = try SealedSpaceKey(keyVersion: row.keyVersion, encapsulatedKeyBase64: row.enc, ciphertextBase64: row.ciphertext)
        return try SpaceKeySealer.open(sealed, spaceID: space, deviceID: id, with: keys)
    }

    /// Creates an encrypted shared space owned by this account.
    func createEncryptedSpace(_ name: String = "Vault") async throws -> UUID {
        let reply = try await sync.send("POST", "/sync/v1/spaces", CreateSpaceRequest(name: name, encrypted: true))
        guard reply.status == 201 else { throw AuthHarness.HarnessError(reply: reply) }
        return try JSONDecoder().decode(SpaceSummary.self, from: reply.body).id
    }
}
