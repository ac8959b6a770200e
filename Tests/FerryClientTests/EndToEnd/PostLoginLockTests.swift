@testable import FerryClient
import FerryCore
import FerrySecurity
import FerryServer
import FerryTesting
import Foundation
import Synchronization
import Testing

/// `PostLoginSync` pushes, seals first keys and pulls as a sync does, so it takes turns with the engine's syncs on the
/// store's lock: two at once could each seal a different first key for a new encrypted space, and the later would
/// replace the one the earlier sealed records with.
@Suite("Post-login sync: the store's sync lock")
struct PostLoginLockTests {
    @Test("it waits while a sync holds the store's lock, and finishes once the lock is free")
    func waitsForTheSyncLock() async throws {
        try await EncryptedSpaceEndToEndTests.withServer(.sqlite) { server, _ in
            let account = try await SignedInAccount.open(server.baseURL, apiKey: server.server.keys.anonKey, email: uniqueEmail("lock"), signUp: true)
            let folder = try TemporaryFolder()
            defer { folder.remove() }
            let store = try LocalStore(fileURL: folder.url.appending(path: "store.sqlite"), schema: account.store.schema, defaultSpace: account.store.defaultSpace)
            let keys = DeviceKeyPair.generate()
            let postLogin = PostLoginSync(
                store: store, syncRemote: account.client, deviceRemote: account.client, deviceKeys: keys,
                device: DeviceRegistration(name: "mac", type: .linux, hostname: "test-mac", publicKey: keys.publicKeyBase64)
            )
            // Another process's sync (a share extension's), holding the lock.
            let held = StoreSyncLock(path: try #require(store.syncLock).path)
            try held.acquireBlocking()
            let finished = Mutex(false)
            let run = Task {
                let result = await postLogin.run()
                finished.withLock { $0 = true }
                return result
            }
            try await Task.sleep(for: .seconds(1))
            #expect(!finished.withLock { $0 }, "it did not finish while the lock was held")
            held.release()
            let result = await run.value
            #expect(result.device != nil && finished.withLock { $0 })
        }
    }
}
