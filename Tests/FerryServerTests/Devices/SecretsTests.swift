import FerryCore
import FerrySecurity
import FerryServer
import FerryTesting
import Foundation
import Testing

/// `GET` and `PUT /sync/v1/secrets`: who may seal which key version to whom, on both engines.
@Suite("Devices: sealed space keys")
struct SecretsTests {
    static var schema: String { get throws { try ExampleSchemas.text("tabletnotes.yaml") } }

    /// An account with a trusted laptop and an approved phone, and an encrypted space.
    static func household(_ server: any ServerUnderTest) async throws -> (laptop: KeyedDevice, phone: KeyedDevice, space: UUID) {
        let (laptop, phone) = try await KeyedDevice.household(server)
        return (laptop, phone, try await laptop.createEncryptedSpace())
    }

    @Test("the first key starts version 1 and opens on the other trusted device", arguments: TestEngine.available)
    func firstKey(_ engine: TestEngine) async throws {
        try await RouterServer.with(engine, schema: try Self.schema, configure: AuthHarness.fastHashing) { server in
            let (laptop, phone, space) = try await Self.household(server)
            #expect(try await laptop.secrets().spaces == [SpaceKeyState(spaceId: space, keyVersion: 0, rotationRequired: false)])
            let key = try SpaceKey.generate(version: 1)
            let results = try await laptop.stored([try laptop.seal(key, space: space, to: laptop), try laptop.seal(key, space: space, to: phone)])
            #expect(results == [SecretResult(status: .stored), SecretResult(status: .stored)])

            let state = try await phone.secrets()
            #expect(state.spaces == [SpaceKeyState(spaceId: space, keyVersion: 1, rotationRequired: false)])
            #expect(state.secrets.count == 1 && state.secrets.first?.sealedBy == laptop.id)
            #expect(try await phone.openKey(space: space, version: 1) == key)
            #expect(state.missing.isEmpty)
            let spaces = try phone.sync.auth.decode(try await phone.sync.get("/sync/v1/spaces"), as: [String: [SpaceSummary]].self)["spaces"]
            #expect(spaces?.first { $0.id == space }?.keyVersion == 1)
        }
    }

    @Test("rows for a pending device, a stranger, a plain space or with bad bytes are refused; the others are stored", arguments: TestEngine.available)
    func perRowRejections(_ engine: TestEngine) async throws {
        try await RouterServer.with(engine, schema: try Self.schema, configure: AuthHarness.fastHashing) { server in
            let (laptop, phone, space) = try await Self.household(server)
            let tablet = try await laptop.sibling()
            try await tablet.registered()
            let stranger = try await KeyedDevice.signUp(server, "stranger")
            try await stranger.registered()
            let plain = try await laptop.sync.createSpace("Plain")
            let key = try SpaceKey.generate(version: 1)
            var short = try laptop.seal(key, space: space, to: phone)
            short.ciphertext = Data(count: 47).base64EncodedString()
            var lowOrder = try laptop.seal(key, space: space, to: phone)
            lowOrder.enc = Data(count: 32).base64EncodedString()
            var unversioned = try laptop.seal(key, space: space, to: phone)
            unversioned.keyVersion = 0
            let rows = [
                try laptop.seal(key, space: space, to: laptop),
                try laptop.seal(key, space: space, to: tablet),
                try laptop.seal(key, space: space, to: stranger),
                try laptop.seal(key, space: plain.id, to: phone),
                try laptop.seal(key, space: stranger.sync.userID, to: phone),
                short, lowOrder, unversioned,
                try laptop.seal(try SpaceKey.generate(version: 3), space: space, to: phone),
                try laptop.seal(key, space: space, to: phone),
            ]
            let results = try await laptop.stored(rows)
            #expect(results.map(\.code) == [
                nil, "device_not_trusted", "device_not_found", "space_not_encrypted", "space_not_found",
                "invalid_secret", "invalid_secret", "invalid_secret", "key_version_conflict", nil,
            ])
            #expect(results.allSatisfy { $0.status == .stored || ($0.message ?? "").count > 20 })
            #expect(try await phone.openKey(space: space, version: 1) == key)
            #expect(try await tablet.secrets().secrets.isEmpty)

            let tooMany = try await laptop.store(Array(repeating: rows[0], count: 1001))
            #expect(tooMany.status == 422 && tooMany.errorCode == "batch_too_large")
        }
    }

    @Test("a competing rotation gets key_version_conflict and cannot overwrite the winner's key", arguments: TestEngine.available)
    func competingRotation(_ engine: TestEngine) async throws {
        try await RouterServer.with(engine, schema: try Self.schema, configure: AuthHarness.fastHashing) { server in
            let (laptop, phone, space) = try await Self.household(server)
            let first = try SpaceKey.generate(version: 1)
            _ = try await laptop.stored([try laptop.seal(first, space: space, to: laptop), try laptop.seal(first, space: space, to: phone)])
            // Both rotate to version 2; the laptop's batch lands first and already holds a row for the phone.
            let winner = try SpaceKey.generate(version: 2), loser = try SpaceKey.generate(version: 2)
            let won = try await laptop.stored([try laptop.seal(winner, space: space, to: laptop), try laptop.seal(winner, space: space, to: phone)])
            #expect(won.map(\.status) == [.stored, .stored])
            let lost = try await phone.stored([try phone.seal(loser, space: space, to: laptop), try phone.seal(loser, space: space, to: phone)])
            #expect(lost.map(\.code) == ["key_version_conflict", "key_version_conflict"])
            #expect(try await laptop.openKey(space: space, version: 2) == winner)
            #expect(try await phone.openKey(space: space, version: 2) == winner)
        }
    }

    @Test("two rotations at once: one wins, the other's rows are refused, and both devices open the winner", arguments: TestEngine.available)
    func concurrentRotations(_ engine: TestEngine) async throws {
        try await RouterServer.with(engine, schema: try Self.schema, configure: AuthHarness.fastHashing) { server in
            let (laptop, phone, space) = try await Self.household(server)
            let first = try SpaceKey.generate(version: 1)
            _ = try await laptop.stored([try laptop.seal(first, space: space, to: laptop), try laptop.seal(first, space: space, to: phone)])
            let laptopKey = try SpaceKey.generate(version: 2), phoneKey = try SpaceKey.generate(version: 2)
            async let fromLaptop = laptop.stored([try laptop.seal(laptopKey, space: space, to: laptop), try laptop.seal(laptopKey, space: space, to: phone)])
            async let fromPhone = phone.stored([try phone.seal(phoneKey, space: space, to: laptop), try phone.seal(phoneKey, space: space, to: phone)])
            let (laptopResults, phoneResults) = try await (fromLaptop, fromPhone)
            let outcomes = Set([laptopResults.map(\.status), phoneResults.map(\.status)])
            #expect(outcomes == [[.stored, .stored], [.rejected, .rejected]], "exactly one rotation wins")
            let winner = laptopResults.first?.status == .stored ? laptopKey : phoneKey
            #expect(try await laptop.openKey(space: space, version: 2) == winner)
            #expect(try await phone.openKey(space: space, version: 2) == winner)
        }
    }

    @Test("storing the same rows twice is an upsert: no new rows", arguments: TestEngine.available)
    func replay(_ engine: TestEngine) async throws {
        try await RouterServer.with(engine, schema: try Self.schema, configure: AuthHarness.fastHashing) { server, database in
            let (laptop, phone, space) = try await Self.household(server)
            let key = try SpaceKey.generate(version: 1)
            let rows = [try laptop.seal(key, space: space, to: laptop), try laptop.seal(key, space: space, to: phone)]
            #expect(try await laptop.stored(rows).map(\.status) == [.stored, .stored])
            #expect(try await laptop.stored(rows).map(\.status) == [.stored, .stored])
            #expect(try await database.integer("SELECT count(*) FROM ferry_secrets") == 2)
            #expect(try await database.integer("SELECT count(*) FROM ferry_space_keys") == 1)
            #expect(try await laptop.secrets().spaces.first?.keyVersion == 1)
        }
    }

    @Test("missing lists the trusted devices of every member that lack the current key", arguments: TestEngine.available)
    func missing(_ engine: TestEngine) async throws {
        try await RouterServer.with(engine, schema: try Self.schema, configure: AuthHarness.fastHashing) { server in
            let (laptop, phone, space) = try await Self.household(server)
            let friend = try await KeyedDevice.signUp(server, "friend")
            try await friend.registered()
            let friendsPending = try await friend.sibling()
            try await friendsPending.registered()
            try await laptop.sync.share(space, with: friend.sync, as: .member)
            #expect(try await laptop.secrets().missing.isEmpty, "no key yet: nothing to hand out")

            let key = try SpaceKey.generate(version: 1)
            _ = try await laptop.stored([try laptop.seal(key, space: space, to: laptop)])
            let missing = try await laptop.secrets().missing
            #expect(Set(missing.map(\.deviceId)) == [phone.id, friend.id], "trusted devices only, of every member")
            #expect(missing.allSatisfy { $0.spaceId == space && $0.keyVersion == 1 })
            #expect(missing.first { $0.deviceId == friend.id }?.publicKey == friend.keys.publicKeyBase64)
            #expect(try await phone.secrets().missing.isEmpty, "the phone holds no key, so it hands out none")

            // The laptop seals to the phone; the phone, now holding version 1, forwards it to the friend.
            _ = try await laptop.stored([try laptop.seal(key, space: space, to: phone)])
            let opened = try #require(try await phone.openKey(space: space, version: 1))
            #expect(try await phone.secrets().missing.map(\.deviceId) == [friend.id])
            #expect(try await phone.stored([try phone.seal(opened, space: space, to: friend)]).map(\.status) == [.stored])
            #expect(try await friend.openKey(space: space, version: 1) == key)
            #expect(try await laptop.secrets().missing.isEmpty)
        }
    }

    @Test("a viewer's device holds and hands on keys but cannot start a key version", arguments: TestEngine.available)
    func viewerCannotRotate(_ engine: TestEngine) async throws {
        try await RouterServer.with(engine, schema: try Self.schema, configure: AuthHarness.fastHashing) { server in
            let (laptop, _, space) = try await Self.household(server)
            let viewer = try await KeyedDevice.signUp(server, "viewer")
            try await viewer.registered()
            try await laptop.sync.share(space, with: viewer.sync, as: .viewer)
            let first = try await viewer.stored([try viewer.seal(try SpaceKey.generate(version: 1), space: space, to: viewer)])
            #expect(first.map(\.code) == ["insufficient_role"])
            let key = try SpaceKey.generate(version: 1)
            _ = try await laptop.stored([try laptop.seal(key, space: space, to: laptop), try laptop.seal(key, space: space, to: viewer)])
            let rotation = try await viewer.stored([try viewer.seal(try SpaceKey.generate(version: 2), space: space, to: viewer)])
            #expect(rotation.map(\.code) == ["insufficient_role"])
            #expect(try await viewer.openKey(space: space, version: 1) == key)
        }
    }

    @Test("a stored key is never replaced by another device, whatever its version; a request starts one version of a space", arguments: TestEngine.available)
    func storedRowsAreFinal(_ engine: TestEngine) async throws {
        try await RouterServer.with(engine, schema: try Self.schema, configure: AuthHarness.fastHashing) { server in
            let (laptop, phone, space) = try await Self.household(server)
            let first = try SpaceKey.generate(version: 1)
            #expect(try await laptop.stored([try laptop.seal(first, space: space, to: laptop), try laptop.seal(first, space: space, to: phone)]).allSatisfy { $0.status == .stored })
            let second = try SpaceKey.generate(version: 2)
            #expect(try await laptop.stored([try laptop.seal(second, space: space, to: laptop), try laptop.seal(second, space: space, to: phone)]).allSatisfy { $0.status == .stored })

            // A tablet trusted after the rotation gets version 1 handed on by the phone.
            let tablet = try await laptop.sibling()
            try await tablet.registered()
            #expect(try await laptop.trust(tablet).status == 200)
            let handedOn = try await phone.stored([try phone.seal(first, space: space, to: tablet)])
            #expect(handedOn == [SecretResult(status: .stored)])

            // Another holder of version 1 cannot replace the phone's row, nor the laptop's own rows of either version.
            let forged = try SpaceKey.generate(version: 1)
            let replaced = try await laptop.stored([try laptop.seal(forged, space: space, to: tablet)])
            #expect(replaced.first?.status == .rejected && replaced.first?.code == .keyVersionConflict)
            let overPhone = try await phone.stored([try phone.seal(first, space: space, to: laptop), try phone.seal(second, space: space, to: laptop)])
            #expect(overPhone.allSatisfy { $0.status == .rejected && $0.code == .keyVersionConflict })
            #expect(try await tablet.openKey(space: space, version: 1) == first, "the tablet still opens the key the phone sealed")
            #expect(try await laptop.openKey(space: space, version: 2) == second)
            // Sealing again one's own row is fine (an interrupted store retried).
            #expect(try await phone.stored([try phone.seal(first, space: space, to: tablet)]) == [SecretResult(status: .stored)])

            // One request starts at most one version of a space.
            let fresh = try await laptop.createEncryptedSpace("Fresh")
            let versions = try (1...3).map { try laptop.seal(try SpaceKey.generate(version: $0), space: fresh, to: laptop) }
            let started = try await laptop.stored(versions)
            #expect(started.map(\.status) == [.stored, .rejected, .rejected])
            #expect(started.dropFirst().allSatisfy { $0.code == .keyVersionConflict })
            #expect(try await laptop.secrets().spaces.first { $0.spaceId == fresh }?.keyVersion == 1)
        }
    }
}
