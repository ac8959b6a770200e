import FerryCore
import FerryServer
import FerryTesting
import Foundation
import Testing

/// `DELETE /auth/v1/user`: an account deleted for good, as the App Store asks, on both engines.
@Suite("Accounts: deletion")
struct AccountDeletionTests {
    static var schema: String { get throws { try ExampleSchemas.text("tabletnotes.yaml") } }

    @Test("deleting an account erases its records and files, ends every session and frees the address", arguments: TestEngine.available)
    func erasesEverything(_ engine: TestEngine) async throws {
        try await RouterServer.with(engine, schema: try Self.schema, configure: AuthHarness.fastHashing) { server, database in
            var phone = try await SyncDevice.signUp(server)
            let tablet = try await phone.sibling()
            let user = phone.userID.lowercasedText
            let audio = Data("a sermon's audio".utf8)
            let upload = try await phone.patch(BlobRoutesTests.path(phone.userID, BlobRoutesTests.hash(audio)), audio, offset: 0, length: audio.count)
            #expect(upload.status == 204)
            let sermon = UUID()
            let pushed = try await phone.push([
                phone.upsert("sermons", sermon, ["title": "Grace", "date": "2026-11-21T10:00:00Z", "audio": BlobRoutesTests.reference(BlobRoutesTests.hash(audio), audio.count)]),
                phone.upsert("notes", ["sermon_id": .string(sermon.lowercasedText), "text": "Key point"]),
            ])
            #expect(pushed.results.allSatisfy { $0.status == .applied })
            let deleted = try await phone.send("DELETE", "/auth/v1/user", [String: String]())
            #expect(deleted.status == 204)

            #expect(try await phone.auth.refresh(tablet.session.refreshToken).status == 400, "the other device's session ended")
            #expect(try await phone.get("/auth/v1/user").status == 403, "the access token names a user that is gone")
            let again = try await phone.auth.send("POST", "/auth/v1/token?grant_type=password", json: ["email": phone.session.user.email, "password": "correct horse 1"])
            #expect(again.status == 400 && again.errorCode == "invalid_credentials")
            for table in ["sermons", "notes", "profiles"] {
                #expect(try await database.integer("SELECT count(*) FROM \(table) WHERE _space = '\(user)'") == 0, "\(table) rows erased")
            }
            for table in ["ferry_users", "ferry_spaces", "ferry_devices", "ferry_sessions", "ferry_members"] {
                let column = table == "ferry_users" || table == "ferry_spaces" ? "id" : "user_id"
                #expect(try await database.integer("SELECT count(*) FROM \(table) WHERE \(column) = '\(user)'") == 0, "\(table) holds nothing of the account")
            }
            if engine == .postgres {
                #expect(try await database.integer("SELECT count(*) FROM ferry_blobs WHERE space_id = '\(user)'") == 0)
            } else {
                #expect(!FileManager.default.fileExists(atPath: "\(database.folder)/blobs/\(user)"), "the blob files are gone")
            }
            let fresh = try await phone.auth.signUp(phone.session.user.email)
            #expect(fresh.user.id != phone.userID, "the address is free for a new account")
        }
    }

    @Test("the last owner of a space others share is refused; a co-owned space passes on; a space alone is erased", arguments: TestEngine.available)
    func sharedSpaces(_ engine: TestEngine) async throws {
        try await RouterServer.with(engine, schema: try Self.schema, configure: AuthHarness.fastHashing) { server, database in
            var owner = try await SyncDevice.signUp(server, "owner")
            let partner = try await SyncDevice.signUp(server, "partner")
            let shared = try await owner.createSpace("Church")
            let alone = try await owner.createSpace("Drafts")
            try await owner.share(shared.id, with: partner, as: .member)
            _ = try await owner.push([owner.upsert("sermons", space: shared.id, ["title": "Shared", "date": "2026-11-21T10:00:00Z"])])
            _ = try await owner.push([owner.upsert("sermons", space: alone.id, ["title": "Draft", "date": "2026-11-21T10:00:00Z"])])

            let refused = try await owner.send("DELETE", "/auth/v1/user", [String: String]())
            #expect(refused.status == 409 && refused.errorCode == "last_owner")
            #expect(try await owner.get("/auth/v1/user").status == 200, "nothing changed")

            let promoted = try await owner.send(
                "PATCH", "/sync/v1/spaces/\(shared.id.lowercasedText)/members/\(partner.userID.lowercasedText)", ChangeRoleRequest(role: .owner)
            )
            #expect(promoted.status == 200)
            #expect(try await owner.send("DELETE", "/auth/v1/user", [String: String]()).status == 204)
            #expect(try await database.integer("SELECT count(*) FROM sermons WHERE _space = '\(shared.id.lowercasedText)'") == 1, "the shared space keeps its records")
            #expect(try await database.integer("SELECT count(*) FROM ferry_spaces WHERE id = '\(shared.id.lowercasedText)' AND owner_id = '\(partner.userID.lowercasedText)'") == 1, "it passed to the other owner")
            #expect(try await database.integer("SELECT count(*) FROM sermons WHERE _space = '\(alone.id.lowercasedText)'") == 0)
            #expect(try await database.integer("SELECT count(*) FROM ferry_spaces WHERE id = '\(alone.id.lowercasedText)'") == 0, "a space it alone belonged to is erased")
            let spaces = try await partner.get("/sync/v1/spaces")
            #expect(spaces.status == 200 && String(decoding: spaces.body, as: UTF8.self).contains(shared.id.lowercasedText))
        }
    }

    @Test("a session older than the reauthentication window needs the current password", arguments: TestEngine.available)
    func needsRecentSignIn(_ engine: TestEngine) async throws {
        try await RouterServer.with(engine, schema: try Self.schema, configure: { configuration in
            AuthHarness.fastHashing(&configuration)
            configuration.auth.reauthenticationWindow = .zero
        }) { server in
            let phone = try await SyncDevice.signUp(server)
            try await Task.sleep(for: .milliseconds(20))
            let bare = try await phone.send("DELETE", "/auth/v1/user", [String: String]())
            #expect(bare.status == 400 && bare.errorCode == "reauthentication_needed")
            let wrong = try await phone.send("DELETE", "/auth/v1/user", ["current_password": "wrong horse 1"])
            #expect(wrong.status == 400 && wrong.errorCode == "reauthentication_needed")
            #expect(try await phone.get("/auth/v1/user").status == 200, "nothing changed")
            #expect(try await phone.send("DELETE", "/auth/v1/user", ["current_password": "correct horse 1"]).status == 204)
        }
    }
}
