import FerryClient
import FerryCore
import FerryServer
import FerryTesting
import Foundation
import Testing

/// Writes into an encrypted space a device cannot seal for yet: they wait, hold nothing else back, and arrive sealed
/// once the device is trusted — through a real server on each engine.
@Suite("Locked encrypted spaces, end to end")
struct LockedSpaceEndToEndTests {
    @Test("a pending device's writes to a locked space wait without holding back its other writes, then arrive sealed once it is trusted",
          arguments: TestEngine.available)
    func parkedWrites(_ engine: TestEngine) async throws {
        try await EncryptedSpaceEndToEndTests.withServer(engine) { server, database in
            let (mac, email, space) = try await EncryptedDevice.ownerWithEncryptedSpace(server, prefix: "parked")
            let marker = "PARKED-\(UUID().uuidString.prefix(8))"

            let phone = try await EncryptedDevice.signIn(server, email: email, signUp: false, name: "phone")
            #expect(await phone.postLogin().run().device?.trust == .pending)
            // First into the locked space, then into the personal one: the later write must not wait behind the earlier.
            let locked = try UnboundRecords.write(2, into: space, on: phone.store, marker: marker)
            let personal = try phone.store.save(collection: "repositories", fields: ["name": "phone's own", "local_path": "/p", "status": "active"])
            let pending = try await phone.sync()
            #expect(pending.lockedSpaces == 1 && pending.rejected == 0)
            #expect(pending.pushed == 1, "only the personal-space write goes out")
            #expect(try phone.store.pendingCount() == 3, "the repository and two sessions of the locked space wait")
            try await mac.sync()
            #expect(try mac.store.fetch(collection: "repositories", id: personal.id)?.fields["name"] == "phone's own")
            #expect(!(try await database.dump()).contains(marker), "nothing of the locked space left the phone in clear")

            _ = try await mac.client.trustDevice(phone.id)
            try await mac.sync()
            let trusted = try await phone.sync()
            #expect(trusted.lockedSpaces == 0 && trusted.rejected == 0)
            #expect(trusted.pushed == 3)
            #expect(try phone.store.pendingCount() == 0)
            try await mac.sync()
            #expect(Set(try mac.sessions(in: space).keys) == Set(locked))
            #expect(try mac.sessions(in: space) == phone.sessions(in: space))
            #expect(!(try await database.dump()).contains(marker), "the parked writes went out sealed")
        }
    }

    @Test("a write into an encrypted space the device did not know was encrypted is kept, not rejected, and sent sealed later",
          arguments: TestEngine.available)
    func unknownEncryptedSpace(_ engine: TestEngine) async throws {
        try await EncryptedSpaceEndToEndTests.withServer(engine) { server, database in
            let (mac, email, space) = try await EncryptedDevice.ownerWithEncryptedSpace(server, prefix: "unseen")
            let marker = "UNSEEN-\(UUID().uuidString.prefix(8))"

            // The pad writes into the space by id before it has ever synced (say, from an invitation link).
            let pad = try await EncryptedDevice.signIn(server, email: email, signUp: false, name: "pad")
            let written = try UnboundRecords.write(1, into: space, on: pad.store, marker: marker)
            let first = await pad.postLogin().run()
            #expect(first.failure == nil && first.device?.trust == .pending)
            #expect(try pad.store.rejections().isEmpty, "the server's encryption_required does not make the write a rejection")
            #expect(try pad.store.pendingCount() == 2)
            #expect(try pad.store.fetch(collection: "agent_coding_sessions", id: written[0])?.syncState == .pending)
            #expect(try pad.store.lockedSpaces() == [space])

            _ = try await mac.client.trustDevice(pad.id)
            try await mac.sync()
            let trusted = try await pad.sync()
            #expect(trusted.pushed == 2 && trusted.rejected == 0)
            try await mac.sync()
            #expect(try mac.sessions(in: space) == pad.sessions(in: space))
            #expect(try mac.sessions(in: space).count == 1)
            #expect(!(try await database.dump()).contains(marker))
        }
    }
}
