import FerryClient
import FerryCore
import FerryServer
import FerryTesting
import Foundation
import Testing

/// `SyncEngine.backgroundSync(deadline:)` and `handleRemoteNotification(_:)` against a real server, with every request
/// of the sleeping device held back by the fault proxy so that the deadline falls mid-pull or mid-push.
@Suite("Background sync, end to end")
struct BackgroundSyncEndToEndTests {
    /// A device signed in through a proxy that delays each request by 300 ms while its faults are on.
    struct SlowDevice {
        let account: SignedInAccount
        let engine: SyncEngine
        let proxy: FaultProxy

        static func open(_ server: LiveServer, email: String) async throws -> SlowDevice {
            var faults = FaultProxy.Configuration(seed: 7)
            faults.faultRate = 0
            faults.delayRate = 1
            faults.minimumDelay = .milliseconds(300)
            faults.maximumDelay = .milliseconds(300)
            faults.guaranteedDropAfter = .max
            faults.isFaulty = false
            let proxy = try await FaultProxy.start(forwardingTo: server.port, configuration: faults)
            let account = try await SignedInAccount.open(proxy.baseURL, apiKey: server.server.keys.anonKey, email: email, signUp: false)
            try await account.client.bindTestDevice(account.store)
            var configuration = SyncEngine.Configuration.manualSync(localChangeDebounce: .seconds(3600))
            configuration.pullLimit = 5
            configuration.pushBatchSize = 5
            return SlowDevice(account: account, engine: SyncEngine(store: account.store, remote: account.client, configuration: configuration), proxy: proxy)
        }

        func titles() throws -> Set<String> {
            Set(try account.store.fetchAll(collection: "sermons").compactMap { $0.fields["title"]?.stringValue })
        }
    }

    static func sermon(_ title: String) -> [String: JSONValue] {
        ["title": .string(title), "date": "2026-11-29T10:00:00Z"]
    }

    @Test("a deadline mid-pull stops between pages; the next sync completes it, nothing lost or applied twice", arguments: TestEngine.available)
    func deadlineMidPull(_ engine: TestEngine) async throws {
        try await LiveServer.with(engine, schema: try ExampleSchemas.text("tabletnotes.yaml"), configure: { $0.useFastPasswordHashing() }) { server in
            let email = uniqueEmail("bg-pull")
            let writer = try await SignedInAccount.open(server.baseURL, apiKey: server.server.keys.anonKey, email: email, signUp: true)
            try await writer.client.bindTestDevice(writer.store)
            let writerEngine = SyncEngine(store: writer.store, remote: writer.client, configuration: .manualSync())
            let titles = Set((0..<30).map { "Pulled \($0)" })
            for title in titles { _ = try writer.store.save(collection: "sermons", fields: Self.sermon(title)) }
            #expect(await writerEngine.backgroundSync(timeLimit: .seconds(60)) != .stoppedAtDeadline)

            let phone = try await SlowDevice.open(server, email: email)
            phone.proxy.setFaulty(true)
            let stopped = await phone.engine.backgroundSync(timeLimit: .milliseconds(1000))
            #expect(stopped == .stoppedAtDeadline, "six pages at 300 ms each cannot finish in a second")
            let partial = try phone.titles()
            #expect(partial.count < 30 && partial.isSubset(of: titles), "whole pages only: \(partial.count)")
            phone.proxy.setFaulty(false)
            let finished = await phone.engine.backgroundSync(timeLimit: .seconds(60))
            guard case .completed = finished else { Issue.record("\(finished)"); return }
            #expect(try phone.titles() == titles)
            #expect(try phone.account.store.fetchAll(collection: "sermons").count == 30)
            await phone.proxy.stop()
        }
    }

    @Test("a deadline mid-push keeps the outbox; the next sync pushes the rest, each write once", arguments: TestEngine.available)
    func deadlineMidPush(_ engine: TestEngine) async throws {
        try await LiveServer.with(engine, schema: try ExampleSchemas.text("tabletnotes.yaml"), configure: { $0.useFastPasswordHashing() }) { server in
            let email = uniqueEmail("bg-push")
            let reader = try await SignedInAccount.open(server.baseURL, apiKey: server.server.keys.anonKey, email: email, signUp: true)
            try await reader.client.bindTestDevice(reader.store)
            let phone = try await SlowDevice.open(server, email: email)
            let titles = Set((0..<100).map { "Pushed \($0)" })
            for title in titles { _ = try phone.account.store.save(collection: "sermons", fields: Self.sermon(title)) }
            phone.proxy.setFaulty(true)
            #expect(await phone.engine.backgroundSync(timeLimit: .milliseconds(1000)) == .stoppedAtDeadline)
            let waiting = try phone.account.store.pendingCount()
            #expect(waiting > 0, "twenty batches at 300 ms each cannot all go in a second")
            phone.proxy.setFaulty(false)
            let finished = await phone.engine.backgroundSync(timeLimit: .seconds(60))
            guard case .completed(let report) = finished else { Issue.record("\(finished)"); return }
            let left = try phone.account.store.pendingCount()
            #expect(report.rejected == 0 && left == 0)
            let readerEngine = SyncEngine(store: reader.store, remote: reader.client, configuration: .manualSync())
            #expect(await readerEngine.backgroundSync(timeLimit: .seconds(60)) != .stoppedAtDeadline)
            let received = try reader.store.fetchAll(collection: "sermons")
            #expect(received.count == 100 && Set(received.compactMap { $0.fields["title"]?.stringValue }) == titles)
            await phone.proxy.stop()
        }
    }

    @Test("a remote notification: Ferry's runs a sync unless the device has that change already; another app's is left alone", arguments: TestEngine.available)
    func remoteNotification(_ engine: TestEngine) async throws {
        try await LiveServer.with(engine, schema: try ExampleSchemas.text("tabletnotes.yaml"), configure: { $0.useFastPasswordHashing() }) { server in
            let email = uniqueEmail("bg-note")
            let writer = try await SignedInAccount.open(server.baseURL, apiKey: server.server.keys.anonKey, email: email, signUp: true)
            try await writer.client.bindTestDevice(writer.store)
            let writerEngine = SyncEngine(store: writer.store, remote: writer.client, configuration: .manualSync())
            let phone = try await SlowDevice.open(server, email: email)
            #expect(RemoteNotification(userInfo: ["aps": ["alert": "hi"]]) == nil, "not Ferry's")
            #expect(RemoteNotification(userInfo: ["aps": ["alert": "hi"], "ferry": ["space": UUID().uuidString]]) == nil, "an alert: no sync needed")

            _ = try writer.store.save(collection: "sermons", fields: Self.sermon("Woken"))
            #expect(await writerEngine.backgroundSync(timeLimit: .seconds(60)) != .stoppedAtDeadline)
            let space = try #require(writer.store.defaultSpace).uuidString.lowercased()
            let hint = try #require(RemoteNotification(userInfo: ["aps": ["content-available": 1], "ferry": ["space": space, "seq": 1]]))
            let woken = await phone.engine.handleRemoteNotification(hint)
            #expect(woken.hasNewData, "\(woken)")
            #expect(try phone.titles() == ["Woken"])
            let requests = phone.proxy.statistics.requests
            let again = await phone.engine.handleRemoteNotification(hint)
            #expect(again == .completed(SyncReport()) && phone.proxy.statistics.requests == requests, "already there: no request")
            await phone.proxy.stop()
        }
    }
}
