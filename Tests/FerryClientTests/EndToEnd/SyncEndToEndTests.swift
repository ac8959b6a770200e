import FerryClient
import FerryCore
import FerryServer
import FerryTesting
import Foundation
import Testing

/// Two devices of one user syncing through a real server on each engine (the sermon app's aggregate).
@Suite("Sync, end to end")
struct SyncEndToEndTests {
    /// One device: its session, local store and engine (local writes wait for an explicit sync by default, so
    /// each test's counts do not depend on how fast the machine is).
    struct Device {
        let auth: AuthClient
        let store: LocalStore
        let engine: SyncEngine

        static func signIn(
            _ server: LiveServer, email: String, password: String, signUp: Bool, localChangeDebounce: Duration = .seconds(3600),
            bound: Bool = true
        ) async throws -> Device {
            let account = try await SignedInAccount.open(
                server.baseURL, apiKey: server.server.keys.anonKey, email: email, password: password, signUp: signUp
            )
            if bound { try await account.client.bindTestDevice(account.store) }
            let configuration = SyncEngine.Configuration.manualSync(localChangeDebounce: localChangeDebounce)
            return Device(auth: account.auth, store: account.store, engine: SyncEngine(store: account.store, remote: account.client, configuration: configuration))
        }

        func rows(_ collection: String) throws -> [String: [String: JSONValue]] {
            Dictionary(uniqueKeysWithValues: try store.fetchAll(collection: collection).map { ($0.id.uuidString, $0.fields) })
        }
    }

    @Test("a sermon with notes and a transcript reaches the other device on create AND on update; concurrent edits of different fields both survive; a delete cascades",
          arguments: TestEngine.available)
    func twoDevices(_ engine: TestEngine) async throws {
        try await LiveServer.with(engine, schema: try ExampleSchemas.text("tabletnotes.yaml"), configure: { $0.useFastPasswordHashing() }) { server in
            let email = uniqueEmail("notes")
            let phone = try await Device.signIn(server, email: email, password: "correct horse 1", signUp: true)
            let pad = try await Device.signIn(server, email: email, password: "correct horse 1", signUp: false)
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await phone.engine.run() }
                group.addTask { try await pad.engine.run() }
                defer { group.cancelAll() }

                // Create on the phone: the sermon and a note.
                let sermon = try phone.store.save(collection: "sermons", fields: ["title": .string("Sunday Service"), "date": .string("2026-11-01T10:00:00Z")])
                let parent = JSONValue.string(sermon.id.uuidString)
                let note = try phone.store.save(collection: "notes", fields: ["sermon_id": parent, "text": .string("Key point"), "timestamp": .number(120.5)])
                let pushed = try await phone.engine.sync()
                #expect(pushed.pushed == 2 && pushed.rejected == 0)
                #expect(pushed.pulled == 0, "the push moved the phone's cursor past its own writes: nothing to pull back")
                #expect(try phone.store.pendingCount() == 0)
                let first = try await pad.engine.sync()
                #expect(first.applied == 2)
                #expect(try pad.store.children(of: "sermons", id: sermon.id)["notes"]?.map(\.id) == [note.id])

                // Update (the sermon app's bug): the transcript arrives and the note is edited on the phone,
                // while the pad edits the sermon's speaker.
                let transcript = try phone.store.save(collection: "transcripts", fields: ["sermon_id": parent, "text": .string("In the beginning"), "status": .string("complete")])
                try phone.store.save(collection: "notes", id: note.id, fields: ["text": .string("Key point, edited")])
                try phone.store.save(collection: "sermons", id: sermon.id, fields: ["transcription_status": .string("complete")])
                try pad.store.save(collection: "sermons", id: sermon.id, fields: ["speaker": .string("Pastor John")])
                #expect(try await phone.engine.sync().pulled == 0)
                let update = try await pad.engine.sync()
                #expect(update.pushed == 1)
                #expect(update.applied >= 3)
                #expect(update.pulled == 3, "the pad was behind: it pulls the transcript, the note and the sermon both edited")
                try await phone.engine.sync()
                let padChildren = try pad.store.children(of: "sermons", id: sermon.id)
                #expect(padChildren["transcripts"]?.map(\.id) == [transcript.id])
                #expect(padChildren["notes"]?.first?.fields["text"] == .string("Key point, edited"))
                for device in [phone, pad] {
                    let row = try #require(try device.store.fetch(collection: "sermons", id: sermon.id))
                    #expect(row.fields["speaker"] == .string("Pastor John"))
                    #expect(row.fields["transcription_status"] == .string("complete"))
                }
                #expect(try phone.rows("sermons") == pad.rows("sermons"))
                #expect(try phone.rows("notes") == pad.rows("notes"))
                #expect(try phone.rows("transcripts") == pad.rows("transcripts"))

                // Delete on the pad: the phone loses the sermon and its children.
                try pad.store.delete(collection: "sermons", id: sermon.id)
                try await pad.engine.sync()
                try await phone.engine.sync()
                #expect(try phone.store.fetch(collection: "sermons", id: sermon.id) == nil)
                #expect(try phone.store.fetch(collection: "notes", id: note.id) == nil)
                #expect(try phone.store.fetch(collection: "transcripts", id: transcript.id) == nil)

                // A second sync with nothing new costs one request and applies nothing.
                let idle = try await phone.engine.sync()
                #expect(idle.requests == 1 && idle.applied == 0)
            }
        }
    }

    @Test("a mutation the server refuses leaves the outbox and stays visible as rejected; the others apply", arguments: TestEngine.available)
    func rejection(_ engine: TestEngine) async throws {
        try await LiveServer.with(engine, schema: try ExampleSchemas.text("tabletnotes.yaml"), configure: { $0.useFastPasswordHashing() }) { server in
            let email = uniqueEmail("reject")
            let device = try await Device.signIn(server, email: email, password: "correct horse 1", signUp: true)
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await device.engine.run() }
                defer { group.cancelAll() }
                let good = try device.store.save(collection: "sermons", fields: ["title": .string("Mine"), "date": .string("2026-11-01T10:00:00Z")])
                let bad = try device.store.save(collection: "sermons", space: UUID(), fields: ["title": .string("Not my space"), "date": .string("2026-11-01T10:00:00Z")])
                let report = try await device.engine.sync()
                #expect(report.pushed == 2 && report.rejected == 1)
                #expect(try device.store.pendingCount() == 0)
                #expect(try device.store.fetch(collection: "sermons", id: good.id)?.syncState == .synced)
                guard case .rejected(let code, _) = try device.store.fetch(collection: "sermons", id: bad.id)?.syncState else {
                    Issue.record("expected the foreign-space write to be rejected")
                    return
                }
                #expect(code == "forbidden_space")
                #expect(try device.store.rejections().count == 1)
                let again = try await device.engine.sync()
                #expect(again.pushed == 0, "a rejected write is never retried")
            }
        }
    }

    @Test("a session bound to no device still pulls; its writes wait in the outbox until the device is registered", arguments: TestEngine.available)
    func unboundSessionWaits(_ engine: TestEngine) async throws {
        try await LiveServer.with(engine, schema: try ExampleSchemas.text("tabletnotes.yaml"), configure: { $0.useFastPasswordHashing() }) { server in
            let email = uniqueEmail("unbound")
            let phone = try await Device.signIn(server, email: email, password: "correct horse 1", signUp: true)
            let pad = try await Device.signIn(server, email: email, password: "correct horse 1", signUp: false, bound: false)
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await phone.engine.run() }
                group.addTask { try await pad.engine.run() }
                defer { group.cancelAll() }
                _ = try phone.store.save(collection: "sermons", fields: ["title": "From the phone", "date": "2026-11-01T10:00:00Z"])
                #expect(try await phone.engine.sync().pushed == 1)

                _ = try pad.store.save(collection: "sermons", fields: ["title": "From the pad", "date": "2026-11-01T10:00:00Z"])
                let waiting = try await pad.engine.sync()
                #expect(waiting.waitingForDeviceRegistration && waiting.pushed == 0 && waiting.applied == 1)
                #expect(try pad.store.pendingCount() == 1, "the write waits; nothing is dropped")

                try await SyncClient(auth: pad.auth).bindTestDevice(pad.store)
                let sent = try await pad.engine.sync()
                let left = try pad.store.pendingCount()
                #expect(!sent.waitingForDeviceRegistration && sent.pushed == 1 && left == 0)
                #expect(try await phone.engine.sync().applied == 1)
            }
        }
    }
}
