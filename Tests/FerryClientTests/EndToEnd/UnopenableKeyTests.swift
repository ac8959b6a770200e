@testable import FerryClient
import FerryCore
import FerrySecurity
import FerryServer
import FerryTesting
import Foundation
import Testing

/// A space key this device holds but cannot open (sealed to a device key it no longer has, say after a restore onto a
/// new phone) locks that space alone: its writes wait, every other space still syncs.
@Suite("Encrypted spaces: a key this device cannot open")
struct UnopenableKeyTests {
    @Test("the space's writes wait at the end of the outbox; the sync succeeds and the other spaces' writes go out")
    func unopenableKeyLocksOneSpace() async throws {
        try await EncryptedSpaceEndToEndTests.withServer(.sqlite) { server, _ in
            let (mac, _, space) = try await EncryptedDevice.ownerWithEncryptedSpace(server, prefix: "unopenable")
            // The store restored onto a device whose key pair is new: the keys it holds, and the server's, are sealed to
            // the old one.
            let restored = SyncEngine(
                store: mac.store, remote: mac.client, encryption: EndToEndEncryption(deviceKeys: DeviceKeyPair.generate(), remote: mac.client),
                configuration: .manualSync(localChangeDebounce: .seconds(3600))
            )
            try UnboundRecords.write(1, into: space, on: mac.store, marker: "locked")
            let plain = try mac.store.save(collection: "repositories", fields: ["name": "plain", "local_path": "/tmp/plain", "status": "active"])
            let report = try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await restored.run() }
                defer { group.cancelAll() }
                return try await restored.sync()
            }
            #expect(report.lockedSpaces >= 1)
            #expect(try mac.store.fetch(collection: "repositories", id: plain.id)?.syncState == .synced, "the plain write went out")
            #expect(try mac.store.pendingCount(in: [space]) > 0, "the locked space's writes wait")
        }
    }
}
