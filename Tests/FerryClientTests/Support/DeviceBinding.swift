import FerryClient
import FerryCore
import FerrySecurity

extension SyncClient {
    /// Registers `store`'s device with a fresh key, binding the session to it: the server takes a push only from a
    /// session bound to the pushing device (``PostLoginSync`` does this in an app).
    func bindTestDevice(_ store: LocalStore) async throws {
        let keys = DeviceKeyPair.generate()
        _ = try await registerDevice(
            store.deviceId, DeviceRegistration(name: "Test device", type: .linux, hostname: "test.local", publicKey: keys.publicKeyBase64), keys: keys
        )
    }
}
