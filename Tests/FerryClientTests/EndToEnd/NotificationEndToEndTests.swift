import FerryClient
import FerryCore
import FerryServer
import FerryTesting
import Foundation
import Testing

/// Background notifications with real engines: a device listening on its stream is not woken, one without is.
@Suite("Notifications, end to end")
struct NotificationEndToEndTests {
    @Test("a write wakes the device without a stream and not the one listening on its stream", arguments: TestEngine.available)
    func streamingDeviceIsNotWoken(_ engine: TestEngine) async throws {
        try await APNsStandIn.with { apns in
            try await LiveServer.with(engine, schema: try ExampleSchemas.text("tabletnotes.yaml"), configure: { configuration in
                configuration.useFastPasswordHashing()
                apns.configure(&configuration)
                configuration.notifications.coalescingDelay = .milliseconds(200)
            }) { server in
                let email = uniqueEmail("woken"), key = server.server.keys.anonKey
                let phone = try await RealtimeEndToEndTests.Device.signIn(server.baseURL, anonKey: key, email: email, signUp: true)
                let pad = try await RealtimeEndToEndTests.Device.signIn(server.baseURL, anonKey: key, email: email, signUp: false)
                let mac = try await RealtimeEndToEndTests.Device.signIn(server.baseURL, anonKey: key, email: email, signUp: false)
                let phoneToken = Data((0..<32).map { _ in UInt8.random(in: 0...255) }), padToken = Data((0..<32).map { _ in UInt8.random(in: 0...255) })
                let registered = try await phone.client.registerPushToken(phoneToken, environment: .sandbox, device: phone.store.deviceId)
                #expect(registered.pushEnvironment == .sandbox && registered.pushToken == phoneToken.map { String(format: "%02x", $0) }.joined())
                _ = try await pad.client.registerPushToken(padToken, environment: .production, device: pad.store.deviceId)
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask { try await phone.engine.run() }
                    defer { group.cancelAll() }
                    try await phone.waitUntilStreaming()
                    _ = try mac.store.save(collection: "sermons", fields: ["title": "Advent 2", "date": "2026-12-06T10:00:00Z"])
                    _ = await mac.engine.backgroundSync(timeLimit: .seconds(30))
                    let requests = await apns.waitForRequests(count: 1, timeout: .seconds(30))
                    try await Task.sleep(for: .seconds(1.5))
                    #expect(apns.received().count == 1, "only the pad: \(apns.received().map(\.deviceToken))")
                    #expect(requests.first?.deviceToken == padToken.map { String(format: "%02x", $0) }.joined())
                    let userInfo = try #require(requests.first?.json)
                    let hint = try #require(RemoteNotification(userInfo: userInfo))
                    let woken = await pad.engine.handleRemoteNotification(hint)
                    #expect(woken.hasNewData, "the pad's sync brought the sermon: \(woken)")
                }
            }
        }
    }
}
