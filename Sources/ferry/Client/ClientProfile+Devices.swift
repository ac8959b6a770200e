import FerryClient
import FerryCore
import FerrySecurity
import Foundation

/// This profile as a device: its X25519 key pair (`device.key`, 0600) and how it describes itself to the server.
extension ClientProfile {
    /// The device key pair, made on first use.
    func deviceKeys() throws -> DeviceKeyPair {
        try FileDeviceKeyStore(folder: folder).loadOrCreate()
    }

    /// What the server's device list shows for this profile.
    func deviceRegistration(name: String? = nil, keys: DeviceKeyPair) -> DeviceRegistration {
        let host = ProcessInfo.processInfo.hostName
        #if os(macOS)
        let kind = DeviceKind.macDesktop
        #else
        let kind = DeviceKind.linux
        #endif
        let fallback = options.profileName == "default" ? host : "\(host) (\(options.profileName))"
        return DeviceRegistration(name: name ?? fallback, type: kind, hostname: String(host.prefix(255)), publicKey: keys.publicKeyBase64)
    }

    /// The end-to-end encryption setup for a sync of this profile.
    func encryption(_ client: SyncClient) throws -> EndToEndEncryption {
        EndToEndEncryption(deviceKeys: try deviceKeys(), remote: client)
    }
}
