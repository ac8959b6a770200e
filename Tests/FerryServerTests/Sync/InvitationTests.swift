import FerryCore
import FerryServer
import FerryTesting
import Foundation
import Testing

/// Invitations with consent: single-use, expiring codes that only the invited address redeems; nothing is granted by
/// signing up, and nothing reveals whether an address has an account.
@Suite("Sync: invitations")
struct InvitationTests {
    static var schema: String { get throws { try ExampleSchemas.text("ops.yaml") } }

    static func invitation(_ reply: HTTPClient.Reply) throws -> SpaceInvitation {
        guard reply.status == 201 else { throw AuthHarness.HarnessError(reply: reply) }
        return try JSONDecoder().decode(SpaceInvitation.self, from: reply.body)
    }

    static func spaceIDs(_ device: SyncDevice) async throws -> Set<UUID> {
        let reply = try await device.get("/sync/v1/spaces")
        let list = try JSONDecoder().decode([String: [SpaceSummary]].self, from: reply.body)
        return Set((list["spaces"] ?? []).map(\.id))
    }

    @Test("signing up with an invited address grants nothing; the code does, once, for that address only", arguments: TestEngine.available)
    func signUpGrantsNothing(_ engine: TestEngine) async throws {
        try await RouterServer.with(engine, schema: try Self.schema, configure: AuthHarness.fastHashing) { server in
            var owner = try await SyncDevice.signUp(server, "owner")
            let company = try await owner.createSpace("Acme")
            _ = try await owner.push([owner.upsert("clients", space: company.id, ["name": "Globex"])])
            let email = uniqueEmail("bob")
            let invitation = try Self.invitation(try await owner.invite(email.uppercased(), to: company.id, as: .admin))
            #expect(invitation.email == email && invitation.role == .admin && invitation.spaceId == company.id)
            let code = try #require(invitation.code)
            // A code never starts with "-", which a command line would read as an option.
            #expect(code.hasPrefix("inv_") && code.count == 36, "\(code)")
            let week = invitation.expiresAt.timeIntervalSince(invitation.createdAt)
            #expect(abs(week - 7 * 24 * 3600) < 1, "codes last 7 days by default")

            // Whoever signs up with bob's address is nobody in the space until a code is redeemed.
            let auth = AuthHarness(server: server)
            var impostor = SyncDevice(auth: auth, session: try await auth.signUp(email))
            try await impostor.bind()
            #expect(try await Self.spaceIDs(impostor) == [impostor.userID])
            #expect(try await impostor.pullAll().changes.allSatisfy { $0.space == impostor.userID })
            let members = try await owner.get("/sync/v1/spaces/\(company.id.uuidString)/members")
            #expect(!String(decoding: members.body, as: UTF8.self).contains(email))

            // Another account holding the code cannot redeem it; a wrong code is the same answer.
            let stranger = try await SyncDevice.signUp(server, "stranger")
            let stolen = try await stranger.accept(code)
            #expect(stolen.status == 404 && stolen.errorCode == "invitation_not_found")
            let guessed = try await stranger.accept(String(code.reversed()))
            #expect(guessed.status == 404 && guessed.errorCode == "invitation_not_found")
            #expect(try await Self.spaceIDs(stranger) == [stranger.userID])

            // The account with the address redeems it and is an admin; a retry answers the same.
            var bob = impostor
            let joined = try await bob.accept(" \(code)\n")
            #expect(joined.status == 200)
            let space = try JSONDecoder().decode(SpaceSummary.self, from: joined.body)
            #expect(space.id == company.id && space.role == .admin)
            #expect(try await bob.accept(code).status == 200, "a retry after a lost reply")
            #expect(try await bob.pullAll().changes.contains { $0.space == company.id && $0.fields["name"] == .string("Globex") })
            let pending = try await owner.get("/sync/v1/spaces/\(company.id.uuidString)/invitations")
            #expect(try JSONDecoder().decode([String: [SpaceInvitation]].self, from: pending.body)["invitations"] == [], "redeemed: no longer pending")
        }
    }

    @Test("an invitation to an existing account waits for its consent, and its reply says nothing about accounts", arguments: TestEngine.available)
    func consent(_ engine: TestEngine) async throws {
        try await RouterServer.with(engine, schema: try Self.schema, configure: AuthHarness.fastHashing) { server in
            let owner = try await SyncDevice.signUp(server, "owner")
            let existing = try await SyncDevice.signUp(server, "existing")
            let company = try await owner.createSpace("Acme")
            let toAccount = try await owner.invite(existing.session.user.email, to: company.id, as: .member)
            let toNobody = try await owner.invite(uniqueEmail("nobody"), to: company.id, as: .member)
            #expect(toAccount.status == 201 && toNobody.status == 201)
            let keys = { (reply: HTTPClient.Reply) throws -> Set<String> in Set(try reply.json().keys) }
            #expect(try keys(toAccount) == keys(toNobody), "the same shape whether the address has an account or not")
            #expect(try keys(toAccount) == ["id", "spaceId", "email", "role", "invitedBy", "createdAt", "expiresAt", "code"])
            #expect(try await Self.spaceIDs(existing) == [existing.userID], "not a member before redeeming")

            // Owners and admins list pending invitations (never their codes) and revoke them.
            let listed = try await owner.get("/sync/v1/spaces/\(company.id.uuidString)/invitations")
            let invitations = try JSONDecoder().decode([String: [SpaceInvitation]].self, from: listed.body)["invitations"] ?? []
            #expect(invitations.count == 2 && invitations.allSatisfy { $0.code == nil })
            #expect(!String(decoding: listed.body, as: UTF8.self).contains("\"code\""))
            let first = try Self.invitation(toAccount)
            let revoke = try await owner.send("DELETE", "/sync/v1/spaces/\(company.id.uuidString)/invitations/\(first.id.uuidString)", [String: String]())
            #expect(revoke.status == 204)
            let again = try await owner.send("DELETE", "/sync/v1/spaces/\(company.id.uuidString)/invitations/\(first.id.uuidString)", [String: String]())
            #expect(again.status == 404 && again.errorCode == "invitation_not_found")
            let revoked = try await existing.accept(try #require(first.code))
            #expect(revoked.status == 404 && revoked.errorCode == "invitation_not_found")
            #expect(try await existing.get("/sync/v1/spaces/\(company.id.uuidString)/invitations").status == 404, "a non-member learns nothing")
        }
    }

    @Test("expired codes are refused; a used one cannot be redeemed again after leaving", arguments: TestEngine.available)
    func expiryAndReuse(_ engine: TestEngine) async throws {
        try await RouterServer.with(engine, schema: try Self.schema, configure: { configuration in
            configuration.useFastPasswordHashing()
            configuration.sync.invitationLifetime = .milliseconds(600)
        }) { server in
            let owner = try await SyncDevice.signUp(server, "owner")
            let guest = try await SyncDevice.signUp(server, "guest")
            let company = try await owner.createSpace("Acme")
            let late = try Self.invitation(try await owner.invite(guest.session.user.email, to: company.id, as: .member))
            try await Task.sleep(for: .milliseconds(900))
            let expired = try await guest.accept(try #require(late.code))
            #expect(expired.status == 410 && expired.errorCode == "invitation_expired")

            let timely = try Self.invitation(try await owner.invite(guest.session.user.email, to: company.id, as: .member, expiresIn: 3600))
            #expect(try await guest.accept(try #require(timely.code)).status == 200)
            let leave = try await guest.send("DELETE", "/sync/v1/spaces/\(company.id.uuidString)/members/\(guest.userID.uuidString)", [String: String]())
            #expect(leave.status == 204)
            let reused = try await guest.accept(try #require(timely.code))
            #expect(reused.status == 409 && reused.errorCode == "invitation_used")

            for bad in [0, 59, 31 * 24 * 3600] {
                let reply = try await owner.invite(guest.session.user.email, to: company.id, as: .member, expiresIn: bad)
                #expect(reply.status == 422, "expiresIn \(bad)")
            }
            let malformed = try await owner.invite("not an address", to: company.id, as: .member)
            #expect(malformed.status == 422 && malformed.errorCode == "email_address_invalid")
        }
    }

    @Test("members leave; owners and admins remove and change roles; a space always keeps an owner", arguments: TestEngine.available)
    func membership(_ engine: TestEngine) async throws {
        try await RouterServer.with(engine, schema: try Self.schema, configure: AuthHarness.fastHashing) { server in
            let owner = try await SyncDevice.signUp(server, "owner")
            let admin = try await SyncDevice.signUp(server, "admin")
            var member = try await SyncDevice.signUp(server, "member")
            let viewer = try await SyncDevice.signUp(server, "viewer")
            let outsider = try await SyncDevice.signUp(server, "outsider")
            let company = try await owner.createSpace("Acme")
            try await owner.share(company.id, with: admin, as: .admin)
            try await owner.share(company.id, with: member, as: .member)
            try await owner.share(company.id, with: viewer, as: .viewer)
            func path(_ user: SyncDevice) -> String { "/sync/v1/spaces/\(company.id.uuidString)/members/\(user.userID.uuidString)" }
            func remove(_ user: SyncDevice, by caller: SyncDevice) async throws -> HTTPClient.Reply {
                try await caller.send("DELETE", path(user), [String: String]())
            }
            func setRole(_ user: SyncDevice, _ role: SpaceRole, by caller: SyncDevice) async throws -> HTTPClient.Reply {
                try await caller.send("PATCH", path(user), ChangeRoleRequest(role: role))
            }

            let lastOwner = try await remove(owner, by: owner)
            #expect(lastOwner.status == 409 && lastOwner.errorCode == "last_owner")
            let demoted = try await setRole(owner, .admin, by: owner)
            #expect(demoted.status == 409 && demoted.errorCode == "last_owner")
            #expect(try await remove(owner, by: admin).status == 403, "an admin does not remove an owner")
            #expect(try await setRole(admin, .owner, by: admin).status == 403, "an admin does not make owners")
            #expect(try await remove(member, by: viewer).errorCode == "insufficient_role")
            let foreign = try await remove(member, by: outsider)
            #expect(foreign.status == 404 && foreign.errorCode == "space_not_found")
            let absent = try await remove(outsider, by: owner)
            #expect(absent.status == 404 && absent.errorCode == "member_not_found")

            let promoted = try await setRole(viewer, .member, by: admin)
            #expect(promoted.status == 200)
            #expect(try JSONDecoder().decode(SpaceMember.self, from: promoted.body).role == .member)
            #expect(try await remove(viewer, by: admin).status == 204)
            #expect(try await Self.spaceIDs(viewer) == [viewer.userID])

            // The member leaves: its pushes into the space are refused from then on.
            #expect(try await remove(member, by: member).status == 204)
            let refused = try await member.push([member.upsert("clients", space: company.id, ["name": "After leaving"])])
            #expect(refused.results.first?.code == "forbidden_space")

            // A second owner lets the first one leave.
            #expect(try await setRole(admin, .owner, by: owner).status == 200)
            #expect(try await remove(owner, by: owner).status == 204)
            #expect(try await Self.spaceIDs(owner) == [owner.userID])
            let list = try await admin.get("/sync/v1/spaces/\(company.id.uuidString)/members")
            let members = try JSONDecoder().decode([String: [SpaceMember]].self, from: list.body)["members"] ?? []
            #expect(members.map(\.userId) == [admin.userID] && members.first?.role == .owner)
            let personal = try await owner.send("DELETE", "/sync/v1/spaces/\(owner.userID.uuidString)/members/\(owner.userID.uuidString)", [String: String]())
            #expect(personal.status == 422, "nobody leaves their personal space")
        }
    }

    @Test("an admin's pending invitations stop working when the admin is removed or demoted", arguments: TestEngine.available)
    func invitationsFollowTheirSender(_ engine: TestEngine) async throws {
        try await RouterServer.with(engine, schema: try Self.schema, configure: AuthHarness.fastHashing) { server in
            let owner = try await SyncDevice.signUp(server, "owner")
            let admin = try await SyncDevice.signUp(server, "admin")
            let other = try await SyncDevice.signUp(server, "other")
            let accomplice = try await SyncDevice.signUp(server, "accomplice")
            let company = try await owner.createSpace("Acme")
            try await owner.share(company.id, with: admin, as: .admin)
            try await owner.share(company.id, with: other, as: .admin)
            // Before losing their role, each admin mints a code for an address they control.
            let fromAdmin = try Self.invitation(try await admin.invite(accomplice.session.user.email, to: company.id, as: .admin))
            let fromOther = try Self.invitation(try await other.invite(accomplice.session.user.email, to: company.id, as: .member))
            func member(_ user: SyncDevice) -> String { "/sync/v1/spaces/\(company.id.uuidString)/members/\(user.userID.uuidString)" }
            #expect(try await owner.send("DELETE", member(admin), [String: String]()).status == 204)
            #expect(try await owner.send("PATCH", member(other), ChangeRoleRequest(role: .member)).status == 200)
            for code in [fromAdmin.code, fromOther.code] {
                let reply = try await accomplice.accept(try #require(code))
                #expect(reply.status == 404 && reply.errorCode == "invitation_not_found")
            }
            #expect(try await Self.spaceIDs(accomplice) == [accomplice.userID])
            let pending = try await owner.get("/sync/v1/spaces/\(company.id.uuidString)/invitations")
            #expect(try JSONDecoder().decode([String: [SpaceInvitation]].self, from: pending.body)["invitations"] == [])
        }
    }

    @Test("spaces and pending invitations per account are capped with clear errors", arguments: TestEngine.available)
    func caps(_ engine: TestEngine) async throws {
        try await RouterServer.with(engine, schema: try Self.schema, configure: { configuration in
            configuration.useFastPasswordHashing()
            configuration.sync.maximumSpacesPerAccount = 3
            configuration.sync.maximumPendingInvitations = 2
        }) { server in
            let owner = try await SyncDevice.signUp(server, "owner")
            let guest = try await SyncDevice.signUp(server, "guest")
            let first = try await owner.createSpace("One")
            let second = try await owner.createSpace("Two")
            let third = try await owner.send("POST", "/sync/v1/spaces", CreateSpaceRequest(name: "Three"))
            #expect(third.status == 409 && third.errorCode == "too_many_spaces")

            let codes = [
                try Self.invitation(try await owner.invite(guest.session.user.email, to: first.id, as: .member)).code,
                try Self.invitation(try await owner.invite(guest.session.user.email, to: second.id, as: .member)).code,
            ]
            let over = try await owner.invite(uniqueEmail("more"), to: first.id, as: .member)
            #expect(over.status == 409 && over.errorCode == "too_many_invitations")
            #expect(try await guest.accept(try #require(codes[0])).status == 200)
            _ = try await guest.createSpace("Guest's own")
            let full = try await guest.accept(try #require(codes[1]))
            #expect(full.status == 409 && full.errorCode == "too_many_spaces")
            #expect(try await Self.spaceIDs(guest).count == 3)
            #expect(try await owner.invite(uniqueEmail("later"), to: first.id, as: .member).status == 201, "a redeemed code no longer counts")
        }
    }
}
