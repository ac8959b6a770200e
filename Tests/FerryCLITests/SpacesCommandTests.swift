import FerryCore
import FerryServer
import FerryTesting
import Foundation
import Testing

/// `ferry spaces invite|join|invitations|uninvite|members|role|remove|leave` as two people use them.
@Suite("ferry spaces: sharing with consent")
struct SpacesCommandTests {
    typealias Device = DataCommandTests.Device

    @Test("invite prints a code, join redeems it once, members, roles, remove and leave; the last owner cannot leave",
          arguments: TestEngine.available)
    func sharing(_ engine: TestEngine) async throws {
        try await LiveServer.with(engine, schema: try ExampleSchemas.text("tabletnotes.yaml"), configure: { $0.useFastPasswordHashing() }) { server in
            let home = NSTemporaryDirectory() + "ferry-home-\(UUID())"
            defer { try? FileManager.default.removeItem(atPath: home) }
            let owner = Device(server: server.baseURL, apiKey: server.server.keys.anonKey, home: home, profile: "owner")
            let guest = Device(server: server.baseURL, apiKey: server.server.keys.anonKey, home: home, profile: "guest")
            let suffix = UUID().uuidString.prefix(6).lowercased()
            let (ownerEmail, guestEmail) = ("owner-\(suffix)@example.com", "guest-\(suffix)@example.com")
            _ = try await owner.ok(["signup", ownerEmail], password: "correct horse 1")
            _ = try await guest.ok(["signup", guestEmail], password: "correct horse 1")
            let space = try await owner.ok(["spaces", "create", "Grace Church"])

            // Standard output is the code alone, so a script captures it whole.
            let code = try await owner.ok(["spaces", "invite", space, guestEmail, "--role", "admin"])
            #expect(!code.contains("\n") && code.count >= 32, "\(code)")
            let invitation = try await owner.json(["spaces", "invite", space, "someone-\(suffix)@example.com", "--expires-in-days", "2"])
            #expect((invitation["code"] as? String)?.count ?? 0 >= 32 && invitation["role"] as? String == "member")
            let pending = try await owner.json(["spaces", "invitations", space])
            #expect((pending["invitations"] as? [[String: Any]])?.count == 2)
            #expect(!String(describing: pending).contains(code), "listing never shows a code")
            let invitationID = try #require(invitation["id"] as? String)
            _ = try await owner.ok(["spaces", "uninvite", space, invitationID])

            #expect(try await guest.ok(["spaces", "ls"]).contains(space) == false, "nothing before redeeming")
            let joined = try await guest.json(["spaces", "join", code])
            #expect(joined["id"] as? String == space && joined["role"] as? String == "admin")
            #expect(try await guest.ok(["spaces", "ls"]).contains(space))
            let stolen = try await owner.run(["spaces", "join", code])
            #expect(stolen.status != 0 && stolen.stderr.contains("invitation_not_found"), "\(stolen.stderr)")

            let members = try await owner.ok(["spaces", "members", space])
            #expect(members.contains("\(ownerEmail)  owner") && members.contains("\(guestEmail)  admin"), "\(members)")
            _ = try await owner.ok(["spaces", "role", space, guestEmail, "member"])
            #expect(try await owner.ok(["spaces", "members", space]).contains("\(guestEmail)  member"))

            let lastOwner = try await owner.run(["spaces", "leave", space])
            #expect(lastOwner.status != 0 && lastOwner.stderr.contains("last_owner"), "\(lastOwner.stderr)")
            _ = try await owner.ok(["spaces", "remove", space, guestEmail])
            #expect(try await guest.ok(["spaces", "ls"]).contains(space) == false)

            // Invited again, the guest joins and then leaves by itself.
            let again = try await owner.ok(["spaces", "invite", space, guestEmail])
            _ = try await guest.ok(["spaces", "join", again])
            _ = try await guest.ok(["spaces", "leave", space])
            #expect(try await owner.ok(["spaces", "members", space]).contains(guestEmail) == false)
        }
    }
}
