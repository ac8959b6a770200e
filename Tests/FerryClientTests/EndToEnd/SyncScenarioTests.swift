import FerryClient
import FerryCore
import FerryServer
import FerryTesting
import Foundation
import Synchronization
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

/// The field-service app's launch and shared spaces with roles, against a real server on each engine.
@Suite("Sync scenarios, end to end")
struct SyncScenarioTests {
    typealias Device = SyncEndToEndTests.Device

    static var tabletNotes: String {
        get throws { try ExampleSchemas.text("tabletnotes.yaml") }
    }

    static let fields: [String: JSONValue] = ["title": "Shared sermon", "date": "2026-11-01T10:00:00Z"]

    @Test("the field-service app: a launch's triggers make one sync and at most a few requests, with the real clock and server",
          arguments: TestEngine.available)
    func launch(_ engine: TestEngine) async throws {
        try await LiveServer.with(engine, schema: try Self.tabletNotes, configure: { $0.useFastPasswordHashing() }) { server in
            let device = try await Device.signIn(server, email: uniqueEmail("launch"), password: "correct horse 1", signUp: true)
            for index in 0..<3 {
                try device.store.save(collection: "sermons", fields: ["title": .string("Sermon \(index)"), "date": "2026-11-01T10:00:00Z"])
            }
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await device.engine.run() }
                defer { group.cancelAll() }
                let updates = device.engine.statusUpdates()
                await device.engine.trigger(.launch)
                await device.engine.connectivityChanged(isReachable: true)
                await device.engine.trigger(.foreground)
                for _ in 0..<3 {
                    await device.engine.connectivityChanged(isReachable: false)
                    await device.engine.connectivityChanged(isReachable: true)
                }
                for await status in updates where status.lastSyncedAt != nil && !status.isSynchronizing { break }
                let report = try #require(await device.engine.lastReport)
                #expect(report.pushed == 3 && report.requests == 2)
                #expect(await device.engine.startedSyncCount == 1)
                let metrics = try String(decoding: await URLSession.shared.data(from: server.url("/metrics")).0, as: UTF8.self)
                #expect(metrics.contains(#"ferry_http_requests_total{method="POST",route="/sync/v1/pull",status="200"} 1"#), "one pull for the whole launch")
                #expect(metrics.contains(#"ferry_http_requests_total{method="POST",route="/sync/v1/push",status="200"} 1"#), "one push for the whole launch")
            }
        }
    }

    @Test("a shared space: members read and write it, a viewer's write is refused and stays visible, the owner sees the member's write",
          arguments: TestEngine.available)
    func roles(_ engine: TestEngine) async throws {
        try await LiveServer.with(engine, schema: try Self.tabletNotes, configure: { $0.useFastPasswordHashing() }) { server in
            let ownerEmail = uniqueEmail("owner"), memberEmail = uniqueEmail("member"), viewerEmail = uniqueEmail("viewer")
            let owner = try await Device.signIn(server, email: ownerEmail, password: "correct horse 1", signUp: true)
            let member = try await Device.signIn(server, email: memberEmail, password: "correct horse 1", signUp: true)
            let viewer = try await Device.signIn(server, email: viewerEmail, password: "correct horse 1", signUp: true)
            let ownerClient = SyncClient(auth: owner.auth)
            let space = try await ownerClient.createSpace(CreateSpaceRequest(name: "Grace Church"))
            #expect(space.role == .owner && !space.isPersonal)
            for (invitee, role) in [(member, SpaceRole.member), (viewer, .viewer)] {
                let invitation = try await ownerClient.invite(InviteRequest(email: invitee.auth.session?.user.email ?? "", role: role), to: space.id)
                _ = try await SyncClient(auth: invitee.auth).acceptInvitation(code: try #require(invitation.code))
            }
            #expect(try await ownerClient.members(of: space.id).count == 3)
            #expect(try await SyncClient(auth: viewer.auth).spaces().first { $0.id == space.id }?.role == .viewer)

            try await withThrowingTaskGroup(of: Void.self) { group in
                for device in [owner, member, viewer] {
                    group.addTask { try await device.engine.run() }
                }
                defer { group.cancelAll() }
                let sermon = try owner.store.save(collection: "sermons", space: space.id, fields: Self.fields)
                try await owner.engine.sync()
                try await member.engine.sync()
                try await viewer.engine.sync()
                #expect(try member.store.fetch(collection: "sermons", id: sermon.id)?.space == space.id)
                #expect(try viewer.store.fetch(collection: "sermons", id: sermon.id) != nil)

                let note = try member.store.save(collection: "notes", fields: ["sermon_id": .string(sermon.id.uuidString), "text": "from the member"])
                #expect(note.space == space.id, "a new child goes to its parent's space")
                let privateSermon = try member.store.save(collection: "sermons", fields: Self.fields)
                #expect(privateSermon.space == member.store.defaultSpace)
                let memberReport = try await member.engine.sync()
                #expect(memberReport.pushed == 2 && memberReport.rejected == 0)
                try viewer.store.save(collection: "sermons", id: sermon.id, fields: ["title": "Viewer edit"])
                let viewerReport = try await viewer.engine.sync()
                #expect(viewerReport.rejected == 1)
                guard case .rejected(let code, _) = try viewer.store.fetch(collection: "sermons", id: sermon.id)?.syncState else {
                    Issue.record("the viewer's edit should be rejected")
                    return
                }
                #expect(code == "forbidden_space")

                try await owner.engine.sync()
                #expect(try owner.store.fetch(collection: "notes", id: note.id)?.fields["text"] == "from the member")
                #expect(try owner.store.fetch(collection: "sermons", id: sermon.id)?.fields["title"] == "Shared sermon")
                #expect(try owner.store.fetch(collection: "sermons", id: privateSermon.id) == nil, "the member's personal space stays private")
            }
        }
    }

    @Test("a space created offline is created by the next sync, before the records written into it", arguments: TestEngine.available)
    func offlineSpace(_ engine: TestEngine) async throws {
        try await LiveServer.with(engine, schema: try Self.tabletNotes, configure: { $0.useFastPasswordHashing() }) { server in
            let device = try await Device.signIn(server, email: uniqueEmail("offline-space"), password: "correct horse 1", signUp: true)
            let space = try device.store.queueSpace(CreateSpaceRequest(name: "Made on a plane"))
            let sermon = try device.store.save(collection: "sermons", space: space, fields: Self.fields)
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await device.engine.run() }
                defer { group.cancelAll() }
                let report = try await device.engine.sync()
                #expect(report.rejected == 0 && report.pushed == 1)
                #expect(try device.store.fetch(collection: "sermons", id: sermon.id)?.syncState == .synced)
                let spaces = try await SyncClient(auth: device.auth).spaces()
                #expect(spaces.first { $0.id == space }?.role == .owner)
            }
        }
    }

    /// A remote whose first push commits on the server but whose answer never arrives (the app was killed, the
    /// connection dropped): the device cannot know the batch was applied.
    final class LostAckRemote: ForwardingSyncRemote {
        let base: SyncClient
        let lost = Mutex(false)

        init(base: SyncClient) { self.base = base }

        func push(_ request: PushRequest) async throws -> PushResponse {
            let response = try await base.push(request)
            let drop = lost.withLock { wasLost in
                defer { wasLost = true }
                return !wasLost
            }
            if drop { throw RemoteError(code: .networkUnavailable, message: "The connection dropped before the answer.") }
            return response
        }
    }

    @Test("an acknowledgement lost after the server committed: the batch is pushed again, the server calls it duplicate, nothing changes twice",
          arguments: TestEngine.available)
    func lostAcknowledgement(_ engine: TestEngine) async throws {
        try await LiveServer.with(engine, schema: try Self.tabletNotes, configure: { $0.useFastPasswordHashing() }) { server in
            let email = uniqueEmail("lost")
            let phone = try await Device.signIn(server, email: email, password: "correct horse 1", signUp: true)
            let pad = try await Device.signIn(server, email: email, password: "correct horse 1", signUp: false)
            let remote = LostAckRemote(base: SyncClient(auth: phone.auth))
            var configuration = SyncEngine.Configuration.manualSync()
            configuration.pushBatchSize = 4
            let flaky = SyncEngine(store: phone.store, remote: remote, configuration: configuration)
            let sermon = try phone.store.save(collection: "sermons", fields: Self.fields)
            for index in 0..<9 {
                try phone.store.save(collection: "notes", fields: ["sermon_id": .string(sermon.id.uuidString), "text": .string("Note \(index)")])
            }
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await flaky.run() }
                group.addTask { try await pad.engine.run() }
                defer { group.cancelAll() }
                await #expect(throws: SyncError.self) { try await flaky.sync() }
                #expect(try phone.store.pendingCount() == 10, "nothing leaves the outbox without an acknowledgement")
                let retry = try await flaky.sync()
                #expect(retry.pushed == 10 && retry.rejected == 0)
                #expect(try phone.store.pendingCount() == 0)
                let pulled = try await pad.engine.sync()
                #expect(pulled.applied == 10)
                #expect(try pad.store.children(of: "sermons", id: sermon.id)["notes"]?.count == 9)
            }
        }
    }
}
