import FerryClient
import FerryCore
import FerrySecurity
import FerryServer
import FerryTesting
import Foundation
import Testing

/// Issue 5 / the coding-agent companion: devices, trust, sealed space keys and encrypted records, through a real server on each engine.
@Suite("Encrypted spaces, end to end")
struct EncryptedSpaceEndToEndTests {
    static var unbound: String {
        get throws { try ExampleSchemas.text("unbound.yaml") }
    }

    /// Runs `body` against a live server whose database the test can also read directly.
    static func withServer(_ engine: TestEngine, _ body: (LiveServer, TestDatabase) async throws -> Void) async throws {
        try await LiveServer.with(engine, schema: Self.unbound, configure: { $0.useFastPasswordHashing() }) { server, database in
            try await body(server, database)
        }
    }

    @Test("three trusted devices read ten encrypted sessions; the server's database holds no plaintext and no key; post-login twice seals nothing twice",
          arguments: TestEngine.available)
    func threeDevices(_ engine: TestEngine) async throws {
        try await Self.withServer(engine) { server, database in
            let email = uniqueEmail("unbound")
            let marker = "PLAINTEXT-\(UUID().uuidString.prefix(8))"
            let mac = try await EncryptedDevice.signIn(server, email: email, signUp: true, name: "mac")
            let macFirst = await mac.postLogin().run()
            #expect(macFirst.device?.trust == .trusted, "the account's first device is trusted")

            let space = try mac.store.queueSpace(CreateSpaceRequest(name: "Agent sessions", encrypted: true))
            let ids = try UnboundRecords.write(10, into: space, on: mac.store, marker: marker)
            let created = try await mac.sync()
            #expect(created.pushed == 11 && created.rejected == 0 && created.sealedKeys == 1)
            #expect(try mac.store.pendingCount() == 0)

            let phone = try await EncryptedDevice.signIn(server, email: email, signUp: false, name: "phone")
            let pad = try await EncryptedDevice.signIn(server, email: email, signUp: false, name: "pad")
            for device in [phone, pad] {
                let result = await device.postLogin().run()
                #expect(result.device?.trust == .pending && result.failure == nil)
                _ = try await mac.client.trustDevice(device.id)
            }
            let handedOut = try await mac.sync()
            #expect(handedOut.sealedKeys == 2, "the mac seals the key to both newly trusted devices")

            let expected = try mac.sessions(in: space)
            #expect(expected.count == 10 && Set(expected.keys) == Set(ids))
            #expect(expected.values.allSatisfy { ($0["status"]?.stringValue ?? "").contains(marker) })
            for device in [phone, pad] {
                try await device.sync()
                #expect(try device.sessions(in: space) == expected, "\(device.name) decrypts every session")
            }

            // No plaintext field value of that space, and no key, anywhere in the server's database.
            let dump = try await database.dump()
            #expect(dump.contains(space.uuidString.lowercased()) || dump.contains(space.uuidString), "the scan reads the real tables")
            #expect(!dump.contains(marker), "a plaintext value reached the server's database")
            let key = try #require(try await mac.spaceKey(space, version: 1))
            let raw = key.rawRepresentation
            for spelling in [raw.base64EncodedString(), raw.map { String(format: "%02x", $0) }.joined(), String(decoding: raw, as: UTF8.self)] {
                #expect(!dump.contains(spelling), "the space key reached the server's database")
            }

            // Post-login again on every device: nothing new is sealed or stored.
            let secretRows = try await database.integer("SELECT COUNT(*) FROM ferry_secrets")
            #expect(secretRows == 3)
            for device in [mac, phone, pad] {
                let again = await device.postLogin().run()
                #expect(again.sealedKeys == 0 && again.isComplete, "\(device.name): \(again.skipped) \(String(describing: again.failure))")
            }
            #expect(try await database.integer("SELECT COUNT(*) FROM ferry_secrets") == secretRows)
            #expect(try await database.integer("SELECT COUNT(*) FROM ferry_devices") == 3)
        }
    }

    @Test("a pending device reads nothing of an encrypted space until trusted; once revoked it reads nothing written later",
          arguments: TestEngine.available)
    func pendingTrustedRevoked(_ engine: TestEngine) async throws {
        try await Self.withServer(engine) { server, database in
            let email = uniqueEmail("trust")
            let mac = try await EncryptedDevice.signIn(server, email: email, signUp: true, name: "mac")
            _ = await mac.postLogin().run()
            let space = try mac.store.queueSpace(CreateSpaceRequest(name: "Secrets", encrypted: true))
            try UnboundRecords.write(3, into: space, on: mac.store, marker: "before")
            try await mac.sync()

            let phone = try await EncryptedDevice.signIn(server, email: email, signUp: false, name: "phone")
            let pending = await phone.postLogin().run()
            #expect(pending.device?.trust == .pending)
            let locked = try await phone.sync()
            #expect(locked.lockedSpaces == 1)
            #expect(try phone.sessions(in: space).isEmpty, "a pending device reads nothing of the encrypted space")
            #expect(try phone.store.fetchAll(collection: "repositories").isEmpty)

            _ = try await mac.client.trustDevice(phone.id)
            try await mac.sync()
            let trusted = try await phone.sync()
            #expect(trusted.lockedSpaces == 0)
            #expect(try phone.sessions(in: space) == mac.sessions(in: space))
            #expect(try phone.sessions(in: space).count == 3)
            let oldKey = try #require(try await phone.spaceKey(space, version: 1))

            // Revoke: the phone's sessions end, the mac rotates the key, and what it writes next uses version 2.
            _ = try await mac.client.revokeDevice(phone.id)
            let rotated = try await mac.sync()
            #expect(rotated.sealedKeys >= 1)
            let later = try UnboundRecords.write(2, into: space, on: mac.store, marker: "after")
            try await mac.sync()
            await #expect(throws: (any Error).self) { try await phone.sync() }
            #expect(try phone.sessions(in: space).count == 3, "nothing written after the revocation reached the phone")
            #expect(try await database.integer("SELECT COUNT(*) FROM ferry_secrets WHERE key_version = 2") == 1, "version 2 is sealed to the mac only")

            // Even given the ciphertext (read here through the account's new session), the phone's keys open nothing new.
            let relogin = AuthClient(endpoint: ServerEndpoint(baseURL: server.baseURL, apiKey: server.server.keys.anonKey), store: InMemorySessionStore())
            _ = try await relogin.signIn(email: email, password: "correct horse 1")
            let pulled = try await SyncClient(auth: relogin).pull(PullRequest())
            let newRows = pulled.changes.filter { later.contains($0.id) }
            #expect(newRows.count == 2)
            for change in newRows {
                guard case .object(let value)? = change.fields["status"], case .string(let ciphertext)? = value["ciphertext"] else {
                    Issue.record("a new session's status is not an encrypted value")
                    continue
                }
                #expect(value["keyVersion"] == .number(2))
                #expect(throws: EncryptionError.self) {
                    try FieldCipher.decrypt(ciphertext, spaceID: space, collection: "agent_coding_sessions", recordID: change.id, field: "status", key: oldKey)
                }
            }
            await #expect(throws: RemoteError.self) {
                _ = try await SyncClient(auth: relogin).registerDevice(phone.id, DeviceRegistration(name: "phone", type: .linux, hostname: "x", publicKey: phone.keys.publicKeyBase64), keys: phone.keys)
            }

            // A device trusted after the rotation is handed both versions and reads what was written before and after.
            let pad = try await EncryptedDevice.signIn(server, email: email, signUp: false, name: "pad")
            _ = await pad.postLogin().run()
            _ = try await mac.client.trustDevice(pad.id)
            let handedOn = try await mac.sync()
            #expect(handedOn.sealedKeys == 2, "key versions 1 and 2")
            try await pad.sync()
            #expect(try pad.sessions(in: space).count == 5)
            #expect(try pad.sessions(in: space) == mac.sessions(in: space))
        }
    }

    /// Fails every device registration, as a flaky server would; everything else goes through.
    struct FailingRegistration: DeviceRemote {
        let base: SyncClient
        func registerDevice(_ id: UUID, _ registration: DeviceRegistration, keys: DeviceKeyPair) async throws -> Device {
            throw RemoteError(code: "service_unavailable", message: "Injected failure.", status: 503)
        }
        func devices() async throws -> [Device] { try await base.devices() }
        func trustDevice(_ id: UUID) async throws -> Device { try await base.trustDevice(id) }
        func revokeDevice(_ id: UUID) async throws -> Device { try await base.revokeDevice(id) }
        func secrets() async throws -> SecretsState { try await base.secrets() }
        func storeSecrets(_ request: StoreSecretsRequest) async throws -> StoreSecretsResponse { try await base.storeSecrets(request) }
    }

    @Test("post-login progress arrives in order and ends at 100 %; a failed device registration is reported, and the writes wait for the next one",
          arguments: TestEngine.available)
    func progressAndSkippedRegistration(_ engine: TestEngine) async throws {
        try await Self.withServer(engine) { server, _ in
            let email = uniqueEmail("progress")
            let mac = try await EncryptedDevice.signIn(server, email: email, signUp: true, name: "mac")
            let personal = try #require(mac.store.defaultSpace)
            let ids = try UnboundRecords.write(10, into: personal, on: mac.store, marker: "offline")

            let postLogin = mac.postLogin(deviceRemote: FailingRegistration(base: mac.client))
            let updates = postLogin.progressUpdates()
            let collected = Task { await updates.reduce(into: [PostLoginProgress]()) { $0.append($1) } }
            let result = await postLogin.run()
            let events = await collected.value

            #expect(result.device == nil && result.failure == nil)
            #expect(result.skipped.map(\.phase) == [.registeringDevice])
            #expect(result.skipped.first?.code == "service_unavailable")
            let waiting = try mac.store.pendingCount()
            #expect(result.pushed == 0 && waiting == 11, "an unbound session cannot push: the writes wait")
            let phases = events.map(\.phase)
            let order = PostLoginProgress.Phase.allCases
            #expect(zip(phases, phases.dropFirst()).allSatisfy { order.firstIndex(of: $0)! <= order.firstIndex(of: $1)! }, "\(phases)")
            #expect(Set(phases) == Set(order), "every phase reports")
            #expect(zip(events, events.dropFirst()).allSatisfy { $0.fractionCompleted <= $1.fractionCompleted })
            #expect(events.last?.phase == .finished && events.last?.fractionCompleted == 1)
            #expect(events.contains { $0.phase == .pushing && $0.total == 11 && $0.message.contains("wait") })

            // The next post-login on the mac registers it after all, and the writes go up.
            let retried = await mac.postLogin().run()
            #expect(retried.device != nil && retried.isComplete && retried.pushed == 11)
            let phone = try await EncryptedDevice.signIn(server, email: email, signUp: false, name: "phone")
            _ = await phone.postLogin().run()
            #expect(Set(try phone.sessions(in: personal).keys) == Set(ids), "nothing written while unregistered was lost")
        }
    }
}
