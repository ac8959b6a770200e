import FerryClient
import FerryCore
import FerryServer
import FerryTesting
import Foundation
import Testing

/// Changes to an encrypted space carried in the realtime poke: ciphertext on the wire, opened by a trusted device's
/// engine and applied without a sync (the engine's second transaction, after the first found the space encrypted).
@Suite("Encrypted spaces over the realtime stream")
struct EncryptedRealtimeEndToEndTests {
    @Test("a write to an encrypted space reaches a trusted listening device carried in the poke, opened and applied without a sync", arguments: TestEngine.available)
    func carriedCiphertext(_ engine: TestEngine) async throws {
        try await EncryptedSpaceEndToEndTests.withServer(engine) { server, _ in
            let (mac, email, space) = try await EncryptedDevice.ownerWithEncryptedSpace(server, prefix: "rt-sealed")
            let phone = try await EncryptedDevice.signIn(server, email: email, signUp: false, name: "phone")
            _ = await phone.postLogin().run()
            _ = try await mac.client.trustDevice(phone.id)
            try await mac.sync()  // seals the space key to the phone
            try await phone.sync()  // the phone's key, and its first pull of the space

            let listener = SyncEngine(
                store: phone.store, remote: phone.client, encryption: EndToEndEncryption(deviceKeys: phone.keys, remote: phone.client),
                configuration: .manualSync(localChangeDebounce: .seconds(3600), realtime: true)
            )
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await listener.run() }
                defer { group.cancelAll() }
                try await eventually("\(listener.status)") { listener.status.realtime == .connected && !listener.status.isSynchronizing }
                _ = try await listener.sync()

                // A write may rightly come as a plain poke (a stream whose account check is pending carries nothing);
                // one of a few must come carried.
                var carried = false
                for attempt in 1...4 where !carried {
                    let syncsBefore = await listener.startedSyncCount
                    let streamedBefore = listener.status.lastStreamedAt
                    let ids = try UnboundRecords.write(1, into: space, on: mac.store, marker: "SEALED-\(attempt)")
                    try await mac.sync()
                    try await eventually("the encrypted write \(attempt) never reached the phone") {
                        try phone.sessions(in: space)[ids[0]] != nil
                    }
                    #expect(try phone.sessions(in: space)[ids[0]] == mac.sessions(in: space)[ids[0]], "the phone reads the session in clear")
                    let streamedAfter = listener.status.lastStreamedAt
                    carried = await listener.startedSyncCount == syncsBefore && streamedAfter != nil && streamedAfter != streamedBefore
                    if !carried { try await Task.sleep(for: .milliseconds(500)) }
                }
                #expect(carried, "no write to the encrypted space came carried in its poke")
            }
        }
    }
}
