import FerrySecurity
import Synchronization

/// Keeps the device key pair in memory only: for previews, tests and throwaway devices that must not write to disk.
public final class InMemoryDeviceKeyStore: DeviceKeyStore {
    private let stored: Mutex<DeviceKeyPair?>

    /// Creates a store holding `keyPair`, or nothing until first use.
    public init(_ keyPair: DeviceKeyPair? = nil) {
        self.stored = Mutex(keyPair)
    }

    /// The key pair held, if any.
    public func load() -> DeviceKeyPair? { stored.withLock { $0 } }

    /// The key pair held, made on first use.
    public func loadOrCreate() -> DeviceKeyPair {
        stored.withLock { keyPair in
            if let keyPair { return keyPair }
            let created = DeviceKeyPair.generate()
            keyPair = created
            return created
        }
    }
}
