import FerryCore
import FerryServer
import FerryTesting
import Foundation
import Testing

/// An app's visible notifications (`POST /sync/v1/notifications`), on both engines.
@Suite("Notifications: alerts from apps")
struct AlertTests {
    static var schema: String { get throws { try ExampleSchemas.text("tabletnotes.yaml") } }

    @Test("an alert reaches the caller's other devices, in clear, with its thread and badge; never the sender", arguments: TestEngine.available)
    func ownDevices(_ engine: TestEngine) async throws {
        try await APNsStandIn.with { apns in
            try await RouterServer.with(engine, schema: try Self.schema, configure: NotificationTests.configure(apns)) { server in
                let mac = try await SyncDevice.signUp(server, "alert")
                let phone = try await mac.sibling(), pad = try await mac.sibling()
                _ = try await mac.registerPushToken()
                let tokens: Set = [try await phone.registerPushToken(), try await pad.registerPushToken()]
                let reply = try await mac.send("POST", "/sync/v1/notifications", AlertRequest(title: "Session 12", body: "Claude needs your input", thread: "session-12", badge: 1))
                #expect(reply.status == 200, "\(reply.text)")
                let answer = try JSONDecoder().decode(AlertReply.self, from: reply.body)
                #expect(answer == AlertReply(sent: 2, failed: 0, tokensCleared: 0))
                let requests = apns.received()
                #expect(Set(requests.map(\.deviceToken)) == tokens && requests.count == 2, "sent while the request waited, to the phone and the pad only")
                for request in requests {
                    #expect(request.providerTokenIsValid && request.headers["apns-push-type"] == "alert" && request.headers["apns-priority"] == "10")
                    let aps = try #require(request.json?["aps"] as? [String: Any])
                    let alert = aps["alert"] as? [String: Any]
                    #expect(alert?["title"] as? String == "Session 12" && alert?["body"] as? String == "Claude needs your input")
                    #expect(aps["thread-id"] as? String == "session-12" && aps["badge"] as? Int == 1)
                    #expect((request.json?["ferry"] as? [String: Any])?["from"] as? String == mac.deviceID.lowercasedText)
                }
            }
        }
    }

    @Test("an alert to a space reaches its members' devices only; a viewer may not send one; a space outside the account is not found", arguments: TestEngine.available)
    func spaceMembers(_ engine: TestEngine) async throws {
        try await APNsStandIn.with { apns in
            try await RouterServer.with(engine, schema: try Self.schema, configure: NotificationTests.configure(apns)) { server in
                let owner = try await SyncDevice.signUp(server, "owner")
                let member = try await SyncDevice.signUp(server, "member"), viewer = try await SyncDevice.signUp(server, "viewer")
                let outsider = try await SyncDevice.signUp(server, "outsider")
                let church = try await owner.createSpace("Church")
                try await owner.share(church.id, with: member, as: .member)
                try await owner.share(church.id, with: viewer, as: .viewer)
                let memberToken = try await member.registerPushToken(), viewerToken = try await viewer.registerPushToken()
                _ = try await outsider.registerPushToken()
                let sent = try await owner.send("POST", "/sync/v1/notifications", AlertRequest(space: church.id, title: "Sermon notes are ready"))
                #expect(sent.status == 200 && (try? JSONDecoder().decode(AlertReply.self, from: sent.body))?.sent == 2, "\(sent.text)")
                #expect(Set(apns.received().map(\.deviceToken)) == [memberToken, viewerToken])

                let byViewer = try await viewer.send("POST", "/sync/v1/notifications", AlertRequest(space: church.id, title: "Hi"))
                #expect(byViewer.status == 403 && byViewer.errorCode == "insufficient_role")
                let foreign = try await outsider.send("POST", "/sync/v1/notifications", AlertRequest(space: church.id, title: "Spam"))
                #expect(foreign.status == 404 && foreign.errorCode == "space_not_found")
                #expect(apns.received().count == 2, "refused alerts send nothing")
            }
        }
    }

    @Test("in an encrypted space the text travels sealed: text in clear is refused, the sealed one goes with mutable-content and a placeholder", arguments: TestEngine.available)
    func encryptedSpace(_ engine: TestEngine) async throws {
        try await APNsStandIn.with { apns in
            try await RouterServer.with(engine, schema: try Self.schema, configure: NotificationTests.configure(apns)) { server in
                let (mac, space, _) = try await EncryptedSpaceTests.vault(server)
                let phone = try await mac.sibling()
                try await phone.registered()
                let token = try await phone.sync.registerPushToken()
                let clear = try await mac.sync.send("POST", "/sync/v1/notifications", AlertRequest(space: space, title: "Secret"))
                #expect(clear.status == 422 && clear.errorCode == "encryption_required", "\(clear.text)")
                let sealed = try await mac.sync.send("POST", "/sync/v1/notifications", AlertRequest(space: space, sealed: "djEuY2lwaGVydGV4dA", placeholder: "New message"))
                #expect(sealed.status == 200, "\(sealed.text)")
                let request = try #require(await apns.waitForRequests(count: 1, timeout: .seconds(30)).first)
                #expect(request.deviceToken == token)
                let aps = try #require(request.json?["aps"] as? [String: Any])
                #expect(aps["mutable-content"] as? Int == 1)
                #expect((aps["alert"] as? [String: Any])?.keys.sorted() == ["title"] && (aps["alert"] as? [String: Any])?["title"] as? String == "New message")
                #expect((request.json?["ferry"] as? [String: Any])?["sealed"] as? String == "djEuY2lwaGVydGV4dA")
                #expect(!String(decoding: request.body, as: UTF8.self).contains("Secret"))
            }
        }
    }

    @Test("bad alerts: empty, sealed in a plain space, oversized, a bad badge, too many a minute; and a server without APNs says so", arguments: TestEngine.available)
    func refusals(_ engine: TestEngine) async throws {
        try await APNsStandIn.with { apns in
            let configure = NotificationTests.configure(apns)
            try await RouterServer.with(engine, schema: try Self.schema, configure: { configure(&$0); $0.notifications.alertsPerMinute = 6 }) { server in
                let mac = try await SyncDevice.signUp(server, "bad")
                _ = try await mac.sibling().registerPushToken()
                let bad: [(AlertRequest, Int, String)] = [
                    (AlertRequest(), 422, "invalid_notification"),
                    (AlertRequest(title: ""), 422, "invalid_notification"),
                    (AlertRequest(title: "x", sealed: "abc"), 422, "invalid_notification"),
                    (AlertRequest(title: String(repeating: "é", count: 3000)), 413, "invalid_notification"),
                    (AlertRequest(title: "x", badge: -1), 422, "invalid_notification"),
                    (AlertRequest(title: "x", thread: String(repeating: "t", count: 65)), 422, "invalid_notification"),
                ]
                for (request, status, code) in bad {
                    let reply = try await mac.send("POST", "/sync/v1/notifications", request)
                    #expect(reply.status == status && reply.errorCode == code, "\(reply.status) \(reply.text)")
                }
                #expect(apns.received().isEmpty, "nothing refused was sent")
                // Six tries so far (refused ones count): the seventh is over the limit of six a minute.
                let limited = try await mac.send("POST", "/sync/v1/notifications", AlertRequest(title: "one more"))
                #expect(limited.status == 429 && limited.errorCode == "over_request_rate_limit" && Int(limited.header("Retry-After") ?? "") ?? 0 > 0)
                let malformed = try await mac.auth.send("POST", "/sync/v1/notifications", body: Data(#"{"title": 5}"#.utf8), token: mac.session.accessToken)
                #expect(malformed.status == 400 || malformed.status == 422, "\(malformed.status) \(malformed.text)")
            }
            try await RouterServer.with(engine, schema: try Self.schema, configure: AuthHarness.fastHashing) { server in
                let mac = try await SyncDevice.signUp(server, "off")
                let reply = try await mac.send("POST", "/sync/v1/notifications", AlertRequest(title: "Hello"))
                #expect(reply.status == 400 && reply.errorCode == "notifications_disabled", "\(reply.text)")
            }
        }
    }
}
