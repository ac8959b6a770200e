import FerryCore
import FerrySecurity
import Foundation
import Synchronization

/// Opens the space keys sealed to this device, once each, for one sync.
///
/// Keys in clear live only in this object's memory; the store keeps them sealed.
final class SpaceKeyring: Sendable {
    let store: LocalStore
    let deviceKeys: DeviceKeyPair
    private let opened = Mutex<[KeyID: SpaceKey]>([:])

    private struct KeyID: Hashable { var space: UUID; var version: Int }

    init(store: LocalStore, deviceKeys: DeviceKeyPair) {
        self.store = store
        self.deviceKeys = deviceKeys
    }

    /// The key of `space` at `version`, or `nil` when none is sealed to this device.
    ///
    /// - Throws: ``FerrySecurity/EncryptionError`` when the sealed key does not open (tampered, or sealed to another key).
    func key(space: UUID, version: Int) throws -> SpaceKey? {
        let id = KeyID(space: space, version: version)
        if let key = opened.withLock({ $0[id] }) { return key }
        guard let secret = try store.sealedSecret(space: space, version: version) else { return nil }
        let sealed = try SealedSpaceKey(keyVersion: version, encapsulatedKeyBase64: secret.enc, ciphertextBase64: secret.ciphertext)
        let key = try SpaceKeySealer.open(sealed, spaceID: space, deviceID: store.deviceId, with: deviceKeys)
        opened.withLock { $0[id] = key }
        return key
    }

    /// Remembers a key this device just made, so it is used before the server has stored its sealed copy.
    func adopt(_ key: SpaceKey, space: UUID) {
        opened.withLock { $0[KeyID(space: space, version: key.version)] = key }
    }
}
