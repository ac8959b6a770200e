import FerryClient
import FerrySecurity
import Testing

@Suite("InMemoryDeviceKeyStore")
struct InMemoryDeviceKeyStoreTests {
    @Test("the first use makes a key pair that later uses return; a given key pair is kept")
    func loadOrCreate() {
        let store = InMemoryDeviceKeyStore()
        #expect(store.load() == nil)
        let created = store.loadOrCreate()
        #expect(store.loadOrCreate().publicKey == created.publicKey)
        #expect(store.load()?.publicKey == created.publicKey)

        let given = DeviceKeyPair.generate()
        #expect(InMemoryDeviceKeyStore(given).loadOrCreate().publicKey == given.publicKey)
    }
}
