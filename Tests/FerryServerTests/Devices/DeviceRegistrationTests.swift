import FerryCore
import FerrySecurity
import FerryServer
import FerryTesting
import Foundation
import Testing

/// `PUT /sync/v1/devices/{id}` and `GET /sync/v1/devices`, on both engines.
@Suite("Devices: registration")
struct DeviceRegistrationTests {
    static var schema: String { get throws { try ExampleSchemas.text("tabletnotes.yaml") } }

    @Test("the first device is trusted, the next one pending; an update keeps trust and key", arguments: TestEngine.available)
    func firstTrustedThenPending(_ engine: TestEngine) async throws {
        try await RouterServer.with(engine, schema: try Self.schema, configure: AuthHarness.fastHashing) { server in
            let laptop = try await KeyedDevice.signUp(server)
            let created = try await laptop.register(name: "  Ada's laptop  ")
            #expect(created.status == 201)
            let first = try JSONDecoder().decode(Device.self, from: created.body)
            #expect(first.trust == .trusted && first.isCurrent && first.name == "Ada's laptop" && first.publicKey == laptop.keys.publicKeyBase64)

            let phone = try await laptop.sibling()
            let second = try await phone.registered(name: "Ada's phone")
            #expect(second.trust == .pending, "an account with a trusted device approves the next ones")

            let updated = try await laptop.register(name: "Ada's old laptop", pushToken: "00AA11bb22cc33dd")
            #expect(updated.status == 200)
            let again = try JSONDecoder().decode(Device.self, from: updated.body)
            #expect(again.trust == .trusted && again.name == "Ada's old laptop" && again.pushToken == "00aa11bb22cc33dd" && again.pushEnvironment == .production)
            #expect(abs(again.createdAt.timeIntervalSince(first.createdAt)) < 0.002, "the wire carries milliseconds")

            let listed = try await phone.devices()
            #expect(listed.map(\.id) == [laptop.id, phone.id], "oldest first")
            #expect(listed.map(\.isCurrent) == [false, true])
            #expect(listed.map(\.trust) == [.trusted, .pending])
        }
    }

    @Test("an account's devices are capped; a revoked one frees its place", arguments: TestEngine.available)
    func deviceCap(_ engine: TestEngine) async throws {
        try await RouterServer.with(engine, schema: try Self.schema, configure: { configuration in
            configuration.useFastPasswordHashing()
            configuration.sync.maximumDevicesPerAccount = 2
        }) { server in
            let laptop = try await KeyedDevice.signUp(server)
            try await laptop.registered()
            let phone = try await laptop.sibling()
            try await phone.registered()
            let tablet = try await laptop.sibling()
            let third = try await tablet.register()
            #expect(third.status == 409 && third.errorCode == "too_many_devices")
            #expect(try await laptop.register(name: "Renamed").status == 200, "an update is not a new device")
            #expect(try await laptop.revoke(phone).status == 200)
            #expect(try await tablet.register().status == 201)
        }
    }

    @Test("two devices registering at once as an account's first: exactly one is trusted", arguments: TestEngine.available)
    func concurrentFirstDevices(_ engine: TestEngine) async throws {
        try await RouterServer.with(engine, schema: try Self.schema, configure: AuthHarness.fastHashing) { server in
            let laptop = try await KeyedDevice.signUp(server)
            let phone = try await laptop.sibling()
            async let first = laptop.registered()
            async let second = phone.registered()
            let trust = try await [first.trust, second.trust]
            #expect(trust.sorted { $0.rawValue < $1.rawValue } == [.pending, .trusted])
        }
    }

    @Test("a device key is never replaced, and a device id belongs to one account", arguments: TestEngine.available)
    func keyMismatchAndConflict(_ engine: TestEngine) async throws {
        try await RouterServer.with(engine, schema: try Self.schema, configure: AuthHarness.fastHashing) { server in
            let laptop = try await KeyedDevice.signUp(server)
            try await laptop.registered()
            var other = laptop.registration()
            other.publicKey = DeviceKeyPair.generate().publicKeyBase64
            let mismatch = try await laptop.sync.send("PUT", laptop.path, other)
            #expect(mismatch.status == 409 && mismatch.errorCode == "device_key_mismatch")

            let stranger = try await KeyedDevice.signUp(server, "stranger")
            let unproven = try await stranger.sync.send("PUT", laptop.path, laptop.registration())
            #expect(unproven.status == 403 && unproven.errorCode == "device_proof_required")
            let stolen = try await stranger.sync.register(stranger.registration(), keys: stranger.keys, device: laptop.id)
            #expect(stolen.status == 409 && stolen.errorCode == "device_conflict")
            #expect(try await stranger.devices().isEmpty)
            let kept = try #require(try await laptop.devices().first)
            #expect(kept.publicKey == laptop.keys.publicKeyBase64 && kept.trust == .trusted)
        }
    }

    @Test("a pending device cannot bind its session to the trusted device by quoting its public key, so it cannot approve itself",
          arguments: TestEngine.available)
    func bindingNeedsTheKey(_ engine: TestEngine) async throws {
        try await RouterServer.with(engine, schema: try Self.schema, configure: AuthHarness.fastHashing) { server in
            let laptop = try await KeyedDevice.signUp(server)
            try await laptop.registered()
            let phone = try await laptop.sibling()
            try await phone.registered()
            let listed = try #require(try await phone.devices().first { $0.id == laptop.id })

            // The attack of the report: re-register under the trusted laptop's id, quoting its listed public key.
            let quoted = DeviceRegistration(name: "Laptop", type: .linux, hostname: "host.local", publicKey: listed.publicKey)
            let unproven = try await phone.sync.send("PUT", laptop.path, quoted)
            #expect(unproven.status == 403 && unproven.errorCode == "device_proof_required")
            var forged = quoted
            forged.proof = DeviceProof(nonce: Data(count: 32).base64EncodedString(), expiresAt: Timestamp.format(Date().addingTimeInterval(60)))
            let guessed = try await phone.sync.send("PUT", laptop.path, forged)
            #expect(guessed.status == 403 && guessed.errorCode == "device_proof_invalid")
            // A proof the laptop made for its own session does not work in another session.
            var replayed = quoted
            replayed.proof = try await laptop.sync.proof(for: listed.publicKey, keys: laptop.keys)
            let replay = try await phone.sync.send("PUT", laptop.path, replayed)
            #expect(replay.status == 403 && replay.errorCode == "device_proof_invalid")
            // A challenge for a key opens only with that key.
            await #expect(throws: EncryptionError.self) { _ = try await phone.sync.proof(for: listed.publicKey, keys: phone.keys, device: laptop.id) }

            let selfApproval = try await phone.trust(phone)
            #expect(selfApproval.status == 403 && selfApproval.errorCode == "device_not_trusted")
            #expect(try await laptop.devices().first { $0.id == phone.id }?.trust == .pending)
            #expect(try await laptop.register(name: "Renamed").status == 200, "a session bound to its device updates it without a new proof")
        }
    }

    /// A registration body with one thing wrong, and the status and code it gets.
    struct Malformed: Sendable, CustomTestStringConvertible {
        var name: String
        var body: [String: String]
        var status: Int
        var code: String
        var testDescription: String { name }
    }

    static let malformed: [Malformed] = {
        let key = DeviceKeyPair.generate().publicKeyBase64
        func body(_ change: (inout [String: String]) -> Void) -> [String: String] {
            var body = ["name": "Laptop", "type": "linux", "hostname": "host", "publicKey": key]
            change(&body)
            return body
        }
        return [
            Malformed(name: "a 31-byte key", body: body { $0["publicKey"] = Data(count: 31).base64EncodedString() }, status: 422, code: "invalid_device"),
            Malformed(name: "a low-order key", body: body { $0["publicKey"] = Data(count: 32).base64EncodedString() }, status: 422, code: "invalid_device"),
            Malformed(name: "a key that is not base64", body: body { $0["publicKey"] = "not a key" }, status: 422, code: "invalid_device"),
            Malformed(name: "a blank name", body: body { $0["name"] = "   " }, status: 422, code: "invalid_device"),
            Malformed(name: "a 101-character name", body: body { $0["name"] = String(repeating: "n", count: 101) }, status: 422, code: "invalid_device"),
            Malformed(name: "a one-character name of 40 KB", body: body { $0["name"] = "e" + String(repeating: "\u{301}", count: 20_000) }, status: 422, code: "invalid_device"),
            Malformed(name: "a 256-character hostname", body: body { $0["hostname"] = String(repeating: "h", count: 256) }, status: 422, code: "invalid_device"),
            Malformed(name: "a 513-character push token", body: body { $0["pushToken"] = String(repeating: "t", count: 513) }, status: 422, code: "invalid_device"),
            Malformed(name: "an unknown type", body: body { $0["type"] = "toaster" }, status: 422, code: "invalid_device"),
            Malformed(name: "a missing public key", body: body { $0["publicKey"] = nil }, status: 400, code: "bad_request"),
        ]
    }()

    @Test("a malformed registration gets a clear 4xx and changes nothing", arguments: TestEngine.available, Self.malformed)
    func malformedRegistrations(_ engine: TestEngine, _ bad: Malformed) async throws {
        try await RouterServer.with(engine, schema: try Self.schema, configure: AuthHarness.fastHashing) { server in
            let device = try await KeyedDevice.signUp(server)
            let reply = try await device.sync.auth.send(
                "PUT", device.path, body: try JSONEncoder().encode(bad.body), token: device.sync.session.accessToken
            )
            #expect(reply.status == bad.status && reply.errorCode == bad.code, "\(reply.text)")
            #expect(((try? reply.json())?["msg"] as? String ?? "").count > 20, "the message says what to fix")
            #expect(try await device.devices().isEmpty)
            let secrets = try await device.sync.get("/sync/v1/secrets")
            #expect(secrets.status == 403 && secrets.errorCode == "device_not_registered", "the session stayed unbound")
        }
    }

    @Test("a bound request moves lastSeenAt forward, at most once per interval", arguments: TestEngine.available)
    func lastSeen(_ engine: TestEngine) async throws {
        try await RouterServer.with(engine, schema: try Self.schema, configure: AuthHarness.fastHashing) { server, database in
            let device = try await KeyedDevice.signUp(server)
            let registered = try await device.registered()
            let id = device.id.uuidString.lowercased()
            // An hour ago: the next request is past the interval and writes.
            try await database.execute(["UPDATE ferry_devices SET last_seen_at = '2026-01-01T00:00:00.000Z' WHERE id = '\(id)'"])
            _ = try await device.sync.pull(PullRequest())
            let seen = try #require(try await device.devices().first?.lastSeenAt)
            #expect(seen >= registered.lastSeenAt)
            // Set a time in the future (within the interval of any later request): requests do not write it back.
            try await database.execute(["UPDATE ferry_devices SET last_seen_at = '2999-01-01T00:00:00.000Z' WHERE id = '\(id)'"])
            _ = try await device.sync.pull(PullRequest())
            #expect(try await device.devices().first?.lastSeenAt == Timestamp.parse("2999-01-01T00:00:00.000Z"))
        }
    }
}
