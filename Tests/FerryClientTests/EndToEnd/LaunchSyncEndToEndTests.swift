import FerryClient
import FerryCore
import FerryServer
import FerryTesting
import Foundation
import Testing

/// The field-service app: a field-service app's company space, seven collections, two users, launches that fire many triggers.
@Suite("Launch sync, end to end (the field-service app)")
struct LaunchSyncEndToEndTests {
    typealias Device = SyncEndToEndTests.Device
    static let collections = ["companies", "users", "clients", "task_types", "projects", "tasks", "calendar_events"]

    @Test("cold start pulls all 700 rows; a warm launch with nothing new is one request and zero rows; after 5 remote changes it applies exactly 5",
          arguments: TestEngine.available)
    func companyLaunches(_ engine: TestEngine) async throws {
        try await LiveServer.with(engine, schema: try ExampleSchemas.text("ops.yaml"), configure: { $0.useFastPasswordHashing() }) { server in
            let suffix = UUID().uuidString.prefix(8).lowercased()
            let office = try await Device.signIn(server, email: "office-\(suffix)@example.com", password: "correct horse 1", signUp: true)
            let techEmail = "tech-\(suffix)@example.com"
            let techAccount = try await Device.signIn(server, email: techEmail, password: "correct horse 1", signUp: true)
            let remote = SyncClient(auth: office.auth)
            let company = try await remote.createSpace(CreateSpaceRequest(name: "Acme Field Service"))
            let invitation = try await remote.invite(InviteRequest(email: techEmail, role: .member), to: company.id)
            _ = try await SyncClient(auth: techAccount.auth).acceptInvitation(code: try #require(invitation.code))

            // The office fills the company space: 7 collections × 100 records (tasks under projects).
            var projects: [UUID] = []
            for index in 0..<100 {
                let stamp = JSONValue.string("2026-11-\(String(format: "%02d", index % 28 + 1))T08:00:00Z")
                try office.store.save(collection: "companies", space: company.id, fields: ["name": .string("Acme \(index)")])
                try office.store.save(collection: "users", space: company.id, fields: ["name": .string("Tech \(index)")])
                try office.store.save(collection: "clients", space: company.id, fields: ["name": .string("Client \(index)")])
                try office.store.save(collection: "task_types", space: company.id, fields: ["name": .string("Type \(index)")])
                projects.append(try office.store.save(collection: "projects", space: company.id, fields: ["title": .string("Project \(index)")]).id)
                try office.store.save(collection: "calendar_events", space: company.id, fields: ["title": "Visit", "start_date": stamp])
            }
            for index in 0..<100 {
                try office.store.save(collection: "tasks", space: company.id, fields: ["project_id": .string(projects[index].uuidString)])
            }
            let running = Task {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask { try await office.engine.run() }
                    try await group.waitForAll()
                }
            }
            defer { running.cancel() }
            let upload = try await office.engine.sync()
            #expect(upload.pushed == 700 && upload.rejected == 0)

            // Cold start on the technician's device: a fresh store pulls everything once.
            let tech = try await Device.signIn(server, email: techEmail, password: "correct horse 1", signUp: false)
            let techRunning = Task { try await tech.engine.run() }
            let cold = try await tech.engine.sync()
            techRunning.cancel()
            _ = await techRunning.result
            #expect(cold.pulled == 700 && cold.applied == 700)
            #expect(cold.requests <= 10, "the field-service app allows at most 10 requests per launch; this one made \(cold.requests)")
            for name in Self.collections {
                #expect(try tech.store.fetchAll(collection: name).count == 100, "\(name)")
            }

            // Warm launch with nothing new: every trigger of a launch fires at once, and they make one sync.
            let warm = try await Self.launch(tech)
            #expect(warm.syncs == 1, "launch, the first path callback, became-active and three flaps coalesce into one sync")
            #expect(warm.report.requests == 1 && warm.report.applied == 0 && warm.report.pulled == 0)

            // Five remote changes: the next launch applies exactly five rows.
            let clients = try office.store.fetchAll(collection: "clients").prefix(3)
            for client in clients { try office.store.save(collection: "clients", id: client.id, fields: ["name": .string("\(client.fields["name"]?.stringValue ?? "") (renamed)")]) }
            try office.store.save(collection: "projects", space: company.id, fields: ["title": "New project"])
            try office.store.delete(collection: "calendar_events", id: try #require(try office.store.fetchAll(collection: "calendar_events").first).id)
            #expect(try await office.engine.sync().pushed == 5)
            let after = try await Self.launch(tech)
            #expect(after.syncs == 1)
            #expect(after.report.applied == 5 && after.report.pulled == 5)
            #expect(try tech.store.fetchAll(collection: "clients").filter { $0.fields["name"]?.stringValue?.hasSuffix("(renamed)") == true }.count == 3)
        }
    }

    /// A warm launch as the field-service app's app had it: launch, the connectivity monitor's first callback, became-active,
    /// then three connectivity flaps within 100 ms. Returns how many syncs the engine started and the last report.
    static func launch(_ device: Device) async throws -> (syncs: Int, report: SyncReport) {
        let engine = SyncEngine(store: device.store, remote: SyncClient(auth: device.auth), configuration: .manualSync())
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await engine.run() }
            defer { group.cancelAll() }
            let updates = engine.statusUpdates()
            await engine.trigger(.launch)
            await engine.connectivityChanged(isReachable: true)
            await engine.trigger(.foreground)
            for _ in 0..<3 {
                await engine.connectivityChanged(isReachable: false)
                await engine.connectivityChanged(isReachable: true)
            }
            // Wait for the sync to finish (the status returns to idle with a last-synced time it did not have).
            let before = engine.status.lastSyncedAt
            for await status in updates where status.phase == .idle && status.lastSyncedAt != before && !status.isSynchronizing {
                break
            }
            let report = try #require(await engine.lastReport)
            return (await engine.startedSyncCount, report)
        }
    }
}
