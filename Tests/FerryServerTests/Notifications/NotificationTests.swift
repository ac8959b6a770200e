import FerryCore
import FerryServer
import FerryTesting
import Foundation
import Testing

/// Background notifications through APNs (played by ``APNsStandIn``, HTTP/2 over TLS on loopback), on both engines.
@Suite("Notifications: background pushes after commits")
struct NotificationTests {
    static var schema: String { get throws { try ExampleSchemas.text("tabletnotes.yaml") } }

    /// A server that sends to `apns`, its notifications coalesced for `coalescing`.
    static func configure(_ apns: APNsStandIn, coalescing: Duration = .milliseconds(300)) -> (inout ServerConfiguration) -> Void {
        { configuration in
            configuration.useFastPasswordHashing()
            apns.configure(&configuration)
            configuration.notifications.coalescingDelay = coalescing
        }
    }

    @Test("a burst of 100 writes wakes each other device of the space once, with a valid provider token; never the writer or a stranger", arguments: TestEngine.available)
    func burstWakesOthersOnce(_ engine: TestEngine) async throws {
        try await APNsStandIn.with { apns in
            try await RouterServer.with(engine, schema: try Self.schema, configure: Self.configure(apns, coalescing: .seconds(1))) { server in
                var laptop = try await SyncDevice.signUp(server, "apns")
                let phone = try await laptop.sibling(), tablet = try await laptop.sibling()
                let stranger = try await SyncDevice.signUp(server, "stranger")
                let tokens = try await [laptop, phone, tablet, stranger].asyncMap { try await $0.registerPushToken() }
                for _ in 0..<100 {
                    _ = try await laptop.push([laptop.upsert("sermons", ["title": "Advent", "date": "2026-11-29T10:00:00Z"])])
                }
                let requests = await apns.waitForRequests(count: 2, timeout: .seconds(30))
                try await Task.sleep(for: .seconds(1.5))
                #expect(apns.received().count == 2, "one notification per device however many commits: \(apns.received().map(\.deviceToken))")
                #expect(Set(requests.map(\.deviceToken)) == [tokens[1], tokens[2]], "the phone and the tablet; not the laptop that wrote, nor a stranger")
                for request in requests {
                    #expect(request.providerTokenIsValid)
                    #expect(request.headers["apns-push-type"] == "background" && request.headers["apns-priority"] == "5")
                    #expect(request.headers["apns-topic"] == apns.topic)
                    let aps = request.json?["aps"] as? [String: Any], ferry = request.json?["ferry"] as? [String: Any]
                    #expect(aps?["content-available"] as? Int == 1)
                    #expect(ferry?["space"] as? String == laptop.userID.lowercasedText)
                    #expect((ferry?["seq"] as? Int ?? 0) >= 1)
                }
            }
        }
    }

    @Test("commits inside the coalescing delay leave one waiting notification per device, even when it may be woken every millisecond", arguments: TestEngine.available)
    func coalescedWithinDelay(_ engine: TestEngine) async throws {
        try await APNsStandIn.with { apns in
            // A delay longer than any burst on a loaded machine: the queue, not the clock, is what the test reads.
            let configure = Self.configure(apns, coalescing: .seconds(120))
            try await RouterServer.with(engine, schema: try Self.schema, configure: { configure(&$0); $0.notifications.minimumInterval = .milliseconds(1) }) { server, database in
                var laptop = try await SyncDevice.signUp(server, "coalesced")
                let phone = try await laptop.sibling(), tablet = try await laptop.sibling()
                _ = try await phone.registerPushToken()
                _ = try await tablet.registerPushToken()
                for index in 0..<10 {
                    _ = try await laptop.push([laptop.upsert("sermons", ["title": .string("Burst \(index)"), "date": "2026-11-29T10:00:00Z"])])
                }
                let last = try await database.integer("SELECT seq FROM ferry_spaces WHERE id = '\(laptop.userID.lowercasedText)'")
                let devices = [phone.deviceID, tablet.deviceID].map { "'\($0.lowercasedText)'" }.joined(separator: ", ")
                try await eventually("the last commit was not queued") {
                    try await database.integer("SELECT COUNT(*) FROM ferry_notification_queue WHERE seq = \(last) AND device_id IN (\(devices))") == 2
                }
                #expect(try await database.integer("SELECT COUNT(*) FROM ferry_notification_queue") == 2, "one row per device, not per commit")
                #expect(apns.received().isEmpty, "nothing sent before the delay")
            }
        }
    }

    @Test("a token APNs answers 410 Unregistered is cleared and never used again", arguments: TestEngine.available)
    func unregisteredTokenCleared(_ engine: TestEngine) async throws {
        try await APNsStandIn.with { apns in
            try await RouterServer.with(engine, schema: try Self.schema, configure: Self.configure(apns)) { server in
                var laptop = try await SyncDevice.signUp(server, "gone")
                let phone = try await laptop.sibling()
                let token = try await phone.registerPushToken()
                apns.unregister(token: token)
                _ = try await laptop.push([laptop.upsert("sermons", ["title": "One", "date": "2026-11-29T10:00:00Z"])])
                #expect(await apns.waitForRequests(count: 1, timeout: .seconds(30)).map(\.deviceToken) == [token])
                try await eventually("the phone's token was not cleared") {
                    try await phone.devices().first { $0.id == phone.deviceID }?.pushToken == nil
                }
                _ = try await laptop.push([laptop.upsert("sermons", ["title": "Two", "date": "2026-11-29T10:00:00Z"])])
                try await Task.sleep(for: .seconds(1.5))
                #expect(apns.received().count == 1, "a cleared token is not tried again")
            }
        }
    }

    @Test("with APNs unavailable, commits go on at their pace and the notification follows once APNs is back", arguments: TestEngine.available)
    func apnsDownThenBack(_ engine: TestEngine) async throws {
        try await APNsStandIn.with { apns in
            try await RouterServer.with(engine, schema: try Self.schema, configure: Self.configure(apns)) { server in
                var laptop = try await SyncDevice.signUp(server, "down")
                let phone = try await laptop.sibling()
                let token = try await phone.registerPushToken()
                apns.setMode(.unavailable)
                _ = try await laptop.push([laptop.upsert("sermons", ["title": "Queued", "date": "2026-11-29T10:00:00Z"])])
                #expect(await apns.waitForRequests(count: 1, timeout: .seconds(30)).count == 1, "the first try meets 503")
                apns.setMode(.normal)
                let requests = await apns.waitForRequests(count: 2, timeout: .seconds(40))
                #expect(requests.count == 2 && requests.allSatisfy { $0.deviceToken == token }, "tried again after a pause")
            }
        }
    }

    @Test("a slow APNs never holds a commit: each push answers long before APNs does", arguments: TestEngine.available)
    func slowAPNsDoesNotSlowCommits(_ engine: TestEngine) async throws {
        try await APNsStandIn.with { apns in
            try await RouterServer.with(engine, schema: try Self.schema, configure: Self.configure(apns, coalescing: .zero)) { server in
                var laptop = try await SyncDevice.signUp(server, "slow")
                let phone = try await laptop.sibling()
                _ = try await phone.registerPushToken()
                apns.setMode(.slow(.seconds(20)))
                let clock = ContinuousClock()
                var slowest = Duration.zero
                for index in 0..<20 {
                    let elapsed = try await clock.measure {
                        _ = try await laptop.push([laptop.upsert("sermons", ["title": .string("Slow \(index)"), "date": "2026-11-29T10:00:00Z"])])
                    }
                    slowest = max(slowest, elapsed)
                    if index == 0 { _ = await apns.waitForRequests(count: 1, timeout: .seconds(30)) }
                }
                // Were a commit to wait for APNs, it would take the stand-in's 20 s.
                #expect(slowest < .seconds(10), "slowest push \(slowest) while APNs takes 20 s to answer")
                print("notifications: slowest of 20 pushes while APNs takes 20 s: \(slowest) (\(engine))")
                apns.setMode(.normal)
            }
        }
    }

    @Test("the push-token route: only the device itself sets its token, as hexadecimal; a re-registration keeps it; DELETE clears it", arguments: TestEngine.available)
    func pushTokenRoute(_ engine: TestEngine) async throws {
        try await RouterServer.with(engine, schema: try Self.schema, configure: AuthHarness.fastHashing) { server in
            let laptop = try await KeyedDevice.signUp(server, "route")
            try await laptop.registered()
            let phone = try await laptop.sibling()
            try await phone.registered()
            let path = laptop.path + "/push-token"
            let bad: [(String, Int, String?)] = [
                (#"{"token":"not hex at all, not hex at all","environment":"sandbox"}"#, 422, "invalid_device"),
                (#"{"token":"abc","environment":"sandbox"}"#, 422, "invalid_device"),
                (#"{"token":"\#(String(repeating: "ab", count: 300))","environment":"sandbox"}"#, 422, "invalid_device"),
                (#"{"token":"\#(String(repeating: "ab", count: 32))","environment":"moon"}"#, 422, "invalid_device"),
                (#"{"environment":"sandbox"}"#, 400, nil),
                (#"["#, 400, nil),
            ]
            for (body, status, code) in bad {
                let reply = try await laptop.sync.auth.send("PUT", path, body: Data(body.utf8), token: laptop.sync.session.accessToken)
                #expect(reply.status == status && (code == nil || reply.errorCode == code), "\(body.prefix(60)): \(reply.status) \(reply.text)")
            }
            let foreign = try await phone.sync.send("PUT", path, PushTokenRequest(token: String(repeating: "cd", count: 32), environment: .sandbox))
            #expect(foreign.status == 403, "a device sets no other device's token: \(foreign.text)")
            let token = try await laptop.sync.registerPushToken(environment: .sandbox)
            var mine = try await laptop.devices().first { $0.id == laptop.id }
            #expect(mine?.pushToken == token && mine?.pushEnvironment == .sandbox)
            try await laptop.registered(name: "Renamed")
            mine = try await laptop.devices().first { $0.id == laptop.id }
            #expect(mine?.pushToken == token, "a registration without a token keeps the one the system gave")
            let taken = try await phone.sync.send("PUT", phone.path + "/push-token", PushTokenRequest(token: token.uppercased(), environment: .production))
            #expect(taken.status == 200, "\(taken.text)")
            let listed = try await laptop.devices()
            #expect(listed.first { $0.id == phone.id }?.pushToken == token, "stored lowercase")
            #expect(listed.first { $0.id == laptop.id }?.pushToken == nil, "a token belongs to one app install: the device that had it loses it")
            _ = try await laptop.sync.registerPushToken(environment: .sandbox)
            #expect(try await laptop.sync.auth.send("DELETE", path, token: laptop.sync.session.accessToken).status == 200)
            mine = try await laptop.devices().first { $0.id == laptop.id }
            #expect(mine?.pushToken == nil && mine?.pushEnvironment == nil)
        }
    }
}

extension NotificationTests {
    @Test("two instances on one PostgreSQL send each notification once")
    func twoInstancesSendOnce() async throws {
        guard TestEngine.available.contains(.postgres) else { return }
        try await APNsStandIn.with { apns in
            try await TestDatabase.with(.postgres) { database in
                var first = database.serverConfiguration, second = database.serverConfiguration
                first.schemaFiles = [try database.writeSchema(try Self.schema)]
                second.schemaFiles = first.schemaFiles
                Self.configure(apns, coalescing: .milliseconds(100))(&first)
                Self.configure(apns, coalescing: .milliseconds(100))(&second)
                first.dataDirectory = database.folder + "/first"
                second.dataDirectory = database.folder + "/second"
                let a = try await LiveServer.start(first), b = try await LiveServer.start(second)
                var writer = try await SyncDevice.signUp(a, "balanced")
                var tokens: Set<String> = []
                for index in 0..<12 {
                    let device = try await SyncDevice(auth: AuthHarness(server: index.isMultiple(of: 2) ? a : b), session: writer.session).sibling()
                    tokens.insert(try await device.registerPushToken())
                }
                _ = try await writer.push([writer.upsert("sermons", ["title": "Once", "date": "2026-11-29T10:00:00Z"])])
                let requests = await apns.waitForRequests(count: 12, timeout: .seconds(30))
                try await Task.sleep(for: .seconds(2))
                #expect(apns.received().count == 12 && Set(requests.map(\.deviceToken)) == tokens, "\(apns.received().count) notifications for 12 devices")
                await a.stop()
                await b.stop()
            }
        }
    }
}

extension SyncDevice {
    /// Registers a fresh random APNs token for this device (`PUT …/push-token`) and returns it.
    @discardableResult
    func registerPushToken(environment: PushEnvironment = .production) async throws -> String {
        let token = (0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
        let reply = try await send("PUT", "/sync/v1/devices/\(deviceID.lowercasedText)/push-token", PushTokenRequest(token: token, environment: environment))
        guard reply.status == 200 else { throw AuthHarness.HarnessError(reply: reply) }
        return token
    }

    func devices() async throws -> [Device] {
        try auth.decode(try await get("/sync/v1/devices"), as: DeviceList.self).devices
    }
}

extension Array {
    func asyncMap<T>(_ transform: (Element) async throws -> T) async rethrows -> [T] {
        var results: [T] = []
        for element in self { results.append(try await transform(element)) }
        return results
    }
}
