import FerryCore
import FerryServer
import FerryTesting
import Foundation
import Testing

/// `ferry login`'s post-login sync, `ferry devices` and an encrypted space, as two profiles of one person use them.
@Suite("ferry devices and encrypted spaces")
struct DevicesCommandTests {
    typealias Device = DataCommandTests.Device

    @Test("login registers each profile; an encrypted space stays locked on a pending device until 'devices trust'; rename and revoke",
          arguments: TestEngine.available)
    func trustJourney(_ engine: TestEngine) async throws {
        try await LiveServer.with(engine, schema: try ExampleSchemas.text("unbound.yaml"), configure: { $0.useFastPasswordHashing() }) { server in
            let home = NSTemporaryDirectory() + "ferry-home-\(UUID())"
            defer { try? FileManager.default.removeItem(atPath: home) }
            let mac = Device(server: server.baseURL, apiKey: server.server.keys.anonKey, home: home, profile: "mac")
            let phone = Device(server: server.baseURL, apiKey: server.server.keys.anonKey, home: home, profile: "phone")
            let email = uniqueEmail("devices")

            let signup = try await mac.json(["signup", email], password: "correct horse 1")
            let macLogin = try #require(signup["post_login"] as? [String: Any])
            #expect(macLogin["device_trust"] as? String == "trusted")
            let login = try await phone.json(["login", email], password: "correct horse 1")
            let phoneLogin = try #require(login["post_login"] as? [String: Any])
            #expect(phoneLogin["device_trust"] as? String == "pending")
            let phoneID = try #require(phoneLogin["device_id"] as? String)
            let mode = try FileManager.default.attributesOfItem(atPath: home + "/profiles/phone/device.key")[.posixPermissions] as? NSNumber
            #expect(mode?.intValue == 0o600, "the device key file is 0600")
            // The device's data is owner-only too: its store (and SQLite's files beside it) and its profile folder.
            for (path, expected) in [("/profiles/phone/store.sqlite", 0o600), ("/profiles/phone/store.sqlite-wal", 0o600), ("/profiles/phone", 0o700)] {
                guard FileManager.default.fileExists(atPath: home + path) else { continue }
                let mode = try FileManager.default.attributesOfItem(atPath: home + path)[.posixPermissions] as? NSNumber
                #expect(mode?.intValue == expected, "\(path) is \(String(mode?.intValue ?? 0, radix: 8))")
            }
            #expect(FileManager.default.fileExists(atPath: home + "/profiles/phone/store.sqlite"))

            let listed = try #require(try await mac.json(["devices", "ls"])["devices"] as? [[String: Any]])
            #expect(listed.count == 2)
            #expect(listed.filter { $0["current"] as? Bool == true }.count == 1)

            // A pending device hears about trust only when there is something encrypted to read.
            let watch = Device(server: server.baseURL, apiKey: server.server.keys.anonKey, home: home, profile: "watch")
            let quiet = try await watch.run(["login", email], password: "correct horse 1")
            #expect(quiet.status == 0 && !quiet.stderr.contains("devices trust"), "\(quiet.stderr)")

            let space = try await mac.ok(["spaces", "create", "Agent sessions", "--encrypted"])
            let repository = try await mac.ok(["put", "repositories", "--space", space, "name=ferry", "local_path=/Users/ada/secret-checkout"])
            let session = try await mac.ok(["put", "agent_coding_sessions", "--space", space, "repository_id=\(repository)", "status=running"])
            #expect(try await mac.json(["sync"])["pushed"] as? Int == 2)

            let locked = try await phone.json(["sync"])
            #expect(locked["locked_spaces"] as? Int == 1)
            #expect(try await phone.ok(["sync"]).contains("this device has no key for them yet"))
            let pad = Device(server: server.baseURL, apiKey: server.server.keys.anonKey, home: home, profile: "pad")
            let told = try await pad.run(["login", email], password: "correct horse 1")
            #expect(told.stderr.contains("to read the account's 1 encrypted space(s)"), "\(told.stderr)")
            #expect(try await phone.run(["get", "agent_coding_sessions", session]).status != 0, "a pending device reads nothing of the space")

            let trusted = try await mac.json(["devices", "trust", phoneID])
            #expect(trusted["sealed_keys"] as? Int == 1)
            #expect(try await phone.json(["sync"])["locked_spaces"] as? Int == 0)
            #expect(try await phone.ok(["get", "agent_coding_sessions", session]).contains("running"))

            let renamed = try await phone.json(["devices", "rename", "Ada's phone"])
            #expect((renamed["device"] as? [String: Any])?["name"] as? String == "Ada's phone")

            let revoked = try await mac.json(["devices", "revoke", phoneID])
            #expect((revoked["device"] as? [String: Any])?["trust"] as? String == "revoked")
            #expect(revoked["sealed_keys"] as? Int == 1, "the mac rotates the space key")
            #expect(try await phone.run(["sync"]).status != 0, "a revoked device is refused")
            let bad = try await mac.run(["devices", "trust", "not-a-uuid"])
            #expect(bad.status != 0 && bad.stderr.contains("device id"))

            // The debug reset deletes the store, not the device: the mac comes back as the same trusted device.
            let macID = try #require(macLogin["device_id"] as? String)
            #expect(try await mac.run(["reset"]).status == 0)
            let again = try #require(try await mac.json(["login", email], password: "correct horse 1")["post_login"] as? [String: Any])
            #expect(again["device_id"] as? String == macID && again["device_trust"] as? String == "trusted")
            #expect((try await mac.json(["devices", "ls"])["devices"] as? [[String: Any]])?.count == 4, "mac, phone, and the watch and pad signed in above")
            #expect(try await mac.ok(["get", "agent_coding_sessions", session]).contains("running"), "its keys come back with the next sync")
        }
    }
}
