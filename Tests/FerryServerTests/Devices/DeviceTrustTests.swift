import FerryCore
import FerrySecurity
import FerryServer
import FerryTesting
import Foundation
import Testing

/// Approving and revoking devices, and what a revocation ends, on both engines.
@Suite("Devices: trust and revocation")
struct DeviceTrustTests {
    static var schema: String { get throws { try ExampleSchemas.text("tabletnotes.yaml") } }

    @Test("a trusted device approves a pending one; a pending device cannot approve, revoke or store keys", arguments: TestEngine.available)
    func approval(_ engine: TestEngine) async throws {
        try await RouterServer.with(engine, schema: try Self.schema, configure: AuthHarness.fastHashing) { server in
            let laptop = try await KeyedDevice.signUp(server)
            try await laptop.registered()
            let phone = try await laptop.sibling()
            try await phone.registered()
            let tablet = try await laptop.sibling()
            try await tablet.registered()

            for reply in [try await phone.trust(tablet), try await phone.revoke(laptop), try await phone.trust(phone)] {
                #expect(reply.status == 403 && reply.errorCode == "device_not_trusted")
            }
            let space = try await laptop.createEncryptedSpace()
            let key = try SpaceKey.generate(version: 1)
            let sealing = try await phone.store([try phone.seal(key, space: space, to: phone)])
            #expect(sealing.status == 403 && sealing.errorCode == "device_not_trusted")

            let approved = try await laptop.trust(phone)
            #expect(approved.status == 200)
            #expect(try JSONDecoder().decode(Device.self, from: approved.body).trust == .trusted)
            #expect(try await laptop.trust(phone).status == 200, "approving twice is a no-op")
            #expect(try await phone.trust(tablet).status == 200, "an approved device may approve others")

            let unknown = try await laptop.sync.auth.send(
                "POST", "/sync/v1/devices/\(UUID().uuidString.lowercased())/trust", token: laptop.sync.session.accessToken
            )
            #expect(unknown.status == 404 && unknown.errorCode == "device_not_found")
            let stranger = try await KeyedDevice.signUp(server, "stranger")
            try await stranger.registered()
            let foreign = try await laptop.revoke(stranger)
            #expect(foreign.status == 404 && foreign.errorCode == "device_not_found", "another account's device is not found")
            #expect(try await stranger.devices().first?.trust == .trusted)
        }
    }

    @Test("revoking ends the device's sessions, flags rotation and is final", arguments: TestEngine.available)
    func revocation(_ engine: TestEngine) async throws {
        try await RouterServer.with(engine, schema: try Self.schema, configure: AuthHarness.fastHashing) { server in
            let (laptop, phone) = try await KeyedDevice.household(server)
            let shared = try await laptop.createEncryptedSpace("Shared")
            let other = try await laptop.createEncryptedSpace("Laptop only")
            let key = try SpaceKey.generate(version: 1)
            let results = try await laptop.stored([
                try laptop.seal(key, space: shared, to: laptop), try laptop.seal(key, space: shared, to: phone),
                try laptop.seal(try SpaceKey.generate(version: 1), space: other, to: laptop),
            ])
            #expect(results.map(\.status) == [.stored, .stored, .stored])

            let revoked = try await laptop.revoke(phone)
            #expect(revoked.status == 200)
            let device = try JSONDecoder().decode(Device.self, from: revoked.body)
            #expect(device.trust == .revoked)

            let afterwards = try await phone.sync.get("/sync/v1/spaces")
            #expect(afterwards.status == 403 && afterwards.errorCode == "session_not_found", "the phone's session is gone")
            let refresh = try await phone.sync.auth.refresh(phone.sync.session.refreshToken)
            #expect(refresh.status == 400, "and so is its refresh token")
            let states = try await laptop.secrets().spaces
            #expect(states.first { $0.spaceId == shared }?.rotationRequired == true)
            #expect(states.first { $0.spaceId == other }?.rotationRequired == false, "the phone never held that key")

            #expect(try await laptop.revoke(phone).status == 200, "revoking twice is a no-op")
            let retrust = try await laptop.trust(phone)
            #expect(retrust.status == 409 && retrust.errorCode == "device_revoked")
            let comeback = try await phone.sibling()
            let reregister = try await comeback.sync.register(phone.registration(), keys: phone.keys, device: phone.id)
            #expect(reregister.status == 403 && reregister.errorCode == "device_revoked")

            let rotated = try await laptop.stored([try laptop.seal(try SpaceKey.generate(version: 2), space: shared, to: laptop)])
            #expect(rotated.map(\.status) == [.stored])
            let state = try #require(try await laptop.secrets().spaces.first { $0.spaceId == shared })
            #expect(state.keyVersion == 2 && !state.rotationRequired, "a new version clears the flag")
        }
    }

    @Test("a session whose device is revoked is refused on every call, even before the session is gone", arguments: TestEngine.available)
    func revokedDeviceRefused(_ engine: TestEngine) async throws {
        try await RouterServer.with(engine, schema: try Self.schema, configure: AuthHarness.fastHashing) { server, database in
            let laptop = try await KeyedDevice.signUp(server)
            try await laptop.registered()
            // As if a revocation committed while this request's session was being read.
            try await database.execute(["UPDATE ferry_devices SET trust = 'revoked' WHERE id = '\(laptop.id.uuidString.lowercased())'"])
            for reply in [try await laptop.sync.get("/sync/v1/spaces"), try await laptop.sync.send("POST", "/sync/v1/pull", PullRequest())] {
                #expect(reply.status == 403 && reply.errorCode == "device_revoked")
            }
        }
    }

    @Test("a device may revoke itself, and an account left without trusted devices trusts its next one", arguments: TestEngine.available)
    func selfRevocationAndRecovery(_ engine: TestEngine) async throws {
        try await RouterServer.with(engine, schema: try Self.schema, configure: AuthHarness.fastHashing) { server in
            let laptop = try await KeyedDevice.signUp(server)
            try await laptop.registered()
            let phone = try await laptop.sibling()
            #expect(try await phone.registered().trust == .pending)
            #expect(try await laptop.revoke(laptop).status == 200)
            let replacement = try await phone.sibling()
            #expect(try await replacement.registered().trust == .trusted, "no trusted device is left to approve it")
            let listed = try await replacement.devices()
            #expect(listed.map(\.trust) == [.revoked, .pending, .trusted])
        }
    }

    @Test("a session bound to no device pulls, but cannot push or touch keys", arguments: TestEngine.available)
    func unboundSession(_ engine: TestEngine) async throws {
        try await RouterServer.with(engine, schema: try Self.schema, configure: AuthHarness.fastHashing) { server in
            let laptop = try await KeyedDevice.signUp(server)
            try await laptop.registered()
            var bound = laptop.sync
            #expect(try await bound.push([bound.upsert("sermons", ["title": "Grace", "date": "2026-11-21T10:00:00Z"])]).results.map(\.status) == [.applied])
            var plain = try await laptop.sync.sibling(bound: false)
            let refused = try await plain.send("POST", "/sync/v1/push", PushRequest(
                deviceId: plain.deviceID, mutations: [plain.upsert("sermons", ["title": "Unbound", "date": "2026-11-21T10:00:00Z"])]
            ))
            #expect(refused.status == 403 && refused.errorCode == "device_not_registered")
            #expect(try await plain.pullAll().changes.count == 1, "the refused push changed nothing")
            let secrets = try await plain.get("/sync/v1/secrets")
            #expect(secrets.status == 403 && secrets.errorCode == "device_not_registered")
            let trust = try await plain.auth.send("POST", laptop.path + "/trust", token: plain.session.accessToken)
            #expect(trust.status == 403 && trust.errorCode == "device_not_registered")
            let listed = try plain.auth.decode(try await plain.get("/sync/v1/devices"), as: DeviceList.self).devices
            #expect(listed.count == 1 && !listed[0].isCurrent)
        }
    }
}
