import FerryCore
import FerryServer
import FerryTesting
import Foundation
import Testing

/// Spaces, roles and invitations: who reads and writes what (docs/architecture.md, invariant 9).
@Suite("Sync: spaces and roles")
struct SpaceTests {
    static var schema: String { get throws { try ExampleSchemas.text("ops.yaml") } }

    @Test("members read and write by role; a viewer's push is rejected per mutation; a non-member sees nothing", arguments: TestEngine.available)
    func roles(_ engine: TestEngine) async throws {
        try await RouterServer.with(engine, schema: try Self.schema, configure: AuthHarness.fastHashing) { server in
            var owner = try await SyncDevice.signUp(server, "owner")
            var member = try await SyncDevice.signUp(server, "member")
            var viewer = try await SyncDevice.signUp(server, "viewer")
            var outsider = try await SyncDevice.signUp(server, "outsider")
            let company = try await owner.createSpace("Acme Field Service")
            #expect(company.role == .owner && !company.isPersonal)
            try await owner.share(company.id, with: member, as: .member)
            try await owner.share(company.id, with: viewer, as: .viewer)

            let client = UUID()
            let ownerWrite = try await owner.push([owner.upsert("clients", client, space: company.id, ["name": "Globex"])])
            #expect(ownerWrite.results.first?.status == .applied)
            let memberWrite = try await member.push([member.upsert("clients", space: company.id, ["name": "Initech"])])
            #expect(memberWrite.results.first?.status == .applied)
            let viewerWrite = try await viewer.push([
                viewer.upsert("clients", space: company.id, ["name": "Nope"]),
                viewer.upsert("clients", ["name": "Mine"]),
            ])
            #expect(viewerWrite.results.map(\.code) == ["forbidden_space", nil], "the viewer's own space still works")
            let outsiderWrite = try await outsider.push([outsider.upsert("clients", client, space: company.id, ["name": "Hijack"])])
            #expect(outsiderWrite.results.first?.code == "forbidden_space")

            let viewerRows = try await viewer.pullAll().changes.filter { $0.space == company.id }
            #expect(viewerRows.count == 2)
            let outsiderPull = try await outsider.pullAll()
            #expect(outsiderPull.changes.allSatisfy { $0.space == outsider.userID })
            #expect(outsider.cursors[company.id] == nil)
            let asked = try await outsider.pull(PullRequest(cursors: [company.id: 0]))
            #expect(asked.changes.isEmpty && asked.cursors[company.id] == nil, "naming a foreign space reveals nothing")
            let members = try await outsider.get("/sync/v1/spaces/\(company.id.uuidString)/members")
            #expect(members.status == 404 && members.errorCode == "space_not_found")

            let viewerInvite = try await viewer.invite("someone@example.com", to: company.id, as: .member)
            #expect(viewerInvite.status == 403 && viewerInvite.errorCode == "insufficient_role")
            let asOwner = try await owner.invite("someone@example.com", to: company.id, as: .owner)
            #expect(asOwner.status == 422)
            let personal = try await owner.invite(member.session.user.email, to: owner.userID, as: .member)
            #expect(personal.status == 422, "a personal space is never shared")
            _ = try await owner.pullAll()
            _ = try await member.pullAll()
        }
    }

    @Test("a space's id and name are checked when it is created", arguments: TestEngine.available)
    func creation(_ engine: TestEngine) async throws {
        try await RouterServer.with(engine, schema: try Self.schema, configure: AuthHarness.fastHashing) { server in
            let owner = try await SyncDevice.signUp(server, "owner")
            let company = try await owner.createSpace("Acme")
            let duplicate = try await owner.send("POST", "/sync/v1/spaces", CreateSpaceRequest(id: company.id, name: "again"))
            #expect(duplicate.status == 409 && duplicate.errorCode == "space_exists")
            let unnamed = try await owner.send("POST", "/sync/v1/spaces", CreateSpaceRequest(name: "  "))
            #expect(unnamed.status == 422)
            // One character carrying 20,000 combining marks: 40 KB that a count of characters would let through.
            let heavy = try await owner.send("POST", "/sync/v1/spaces", CreateSpaceRequest(name: "e" + String(repeating: "\u{301}", count: 20_000)))
            #expect(heavy.status == 422 && heavy.errorCode == "validation_failed")
        }
    }
}
