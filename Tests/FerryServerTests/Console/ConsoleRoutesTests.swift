import FerryCore
import FerryServer
import FerryTesting
import Foundation
import Testing

/// `/console/api`: operators' sessions (cookie, CSRF, rate limits) and what the console reads and does, on both engines.
@Suite("Console: operators and the console API")
struct ConsoleRoutesTests {
    static var schema: String { get throws { try ExampleSchemas.text("tabletnotes.yaml") } }
    static let password = "correct horse battery"

    /// An operator signed in to the console: the cookie and the CSRF token.
    struct Operator {
        let server: any ServerUnderTest
        let cookie: String
        let csrf: String

        static func signIn(_ server: any ServerUnderTest, email: String = "ops@example.com", password: String = ConsoleRoutesTests.password) async throws -> Operator {
            let reply = try await server.send("POST", "/console/api/session", headers: ["Content-Type": "application/json"], body: try JSONSerialization.data(
                withJSONObject: ["email": email, "password": password]
            ))
            try #require(reply.status == 200, "\(reply.status) \(reply.text)")
            let setCookie = try #require(reply.header("Set-Cookie"))
            #expect(setCookie.contains("HttpOnly") && setCookie.contains("SameSite=Strict") && setCookie.contains("Path=/console"), "\(setCookie)")
            let cookie = String(setCookie.prefix { $0 != ";" })
            return Operator(server: server, cookie: cookie, csrf: try #require(try reply.json()["csrf_token"] as? String))
        }

        func get(_ path: String) async throws -> HTTPClient.Reply {
            try await server.send("GET", path, headers: ["Cookie": cookie])
        }

        func json(_ path: String) async throws -> [String: Any] {
            let reply = try await get(path)
            try #require(reply.status == 200, "\(path): \(reply.status) \(reply.text)")
            return try reply.json()
        }

        func change(_ method: String, _ path: String, _ body: [String: Any]? = nil, csrf: String? = nil) async throws -> HTTPClient.Reply {
            var headers = ["Cookie": cookie, "X-CSRF-Token": csrf ?? self.csrf]
            if body != nil { headers["Content-Type"] = "application/json" }
            return try await server.send(method, path, headers: headers, body: try body.map { try JSONSerialization.data(withJSONObject: $0) })
        }
    }

    static func items(_ object: [String: Any]) -> [[String: Any]] { object["items"] as? [[String: Any]] ?? [] }

    @Test("an operator signs in; a wrong password, an app user's token, the service-role key and a missing CSRF token get nothing", arguments: TestEngine.available)
    func sessions(_ engine: TestEngine) async throws {
        try await RouterServer.with(engine, schema: try Self.schema, configure: AuthHarness.fastHashing) { server in
            try await server.server.operators.add(email: "Ops@Example.com", password: Self.password)
            let user = try await SyncDevice.signUp(server, "ada")

            let wrong = try await server.send("POST", "/console/api/session", headers: ["Content-Type": "application/json"],
                body: Data(#"{"email":"ops@example.com","password":"not the password"}"#.utf8))
            #expect(wrong.status == 401 && wrong.errorCode == "invalid_credentials" && wrong.header("Set-Cookie") == nil)
            let unknown = try await server.send("POST", "/console/api/session", headers: ["Content-Type": "application/json"],
                body: Data(#"{"email":"nobody@example.com","password":"whatever it is"}"#.utf8))
            #expect(unknown.status == 401 && unknown.text == wrong.text, "one answer for a wrong e-mail and a wrong password")
            let form = try await server.send("POST", "/console/api/session", headers: ["Content-Type": "text/plain"],
                body: Data(#"{"email":"ops@example.com","password":"correct horse battery"}"#.utf8))
            #expect(form.status == 415 && form.header("Set-Cookie") == nil, "a cross-site form cannot sign a browser in")
            // An app user's session and the API keys mean nothing here.
            let keys = server.server.keys
            for headers in [
                [:], ["Authorization": "Bearer \(user.session.accessToken)", "apikey": keys.anonKey],
                ["Authorization": "Bearer \(keys.serviceRoleKey)", "apikey": keys.serviceRoleKey],
                ["Cookie": "ferry_console=\(user.session.accessToken)"],
            ] {
                let reply = try await server.send("GET", "/console/api/users", headers: headers)
                #expect(reply.status == 401 && reply.errorCode == "no_session" && !reply.text.contains(user.session.user.email), "\(headers.keys)")
            }

            let ops = try await Operator.signIn(server, email: "OPS@example.com")
            let session = try await ops.json("/console/api/session")
            #expect((session["operator"] as? [String: Any])?["email"] as? String == "ops@example.com" && session["csrf_token"] as? String == ops.csrf)
            let users = try await ops.get("/console/api/users")
            #expect(users.status == 200 && users.header("Cache-Control") == "no-store" && users.header("X-Frame-Options") == "DENY")
            #expect(users.text.contains(user.session.user.email))
            // Changes need the session's CSRF token.
            let target = "/console/api/users/\(user.userID.lowercasedText)/sign-out"
            #expect(try await ops.change("POST", target, csrf: "").errorCode == "csrf_failed")
            #expect(try await ops.change("POST", target, csrf: String(ops.csrf.reversed())).status == 403)
            #expect(try await server.send("POST", target, headers: ["Cookie": ops.cookie]).status == 403)

            #expect(try await ops.change("DELETE", "/console/api/session").status == 204)
            #expect(try await ops.get("/console/api/users").status == 401, "a signed-out cookie is dead")
            let log = try await Operator.signIn(server).json("/console/api/log")
            let actions = Self.items(log).compactMap { $0["action"] as? String }
            #expect(actions.prefix(3) == ["sign_in", "sign_out", "sign_in"], "\(actions)")
            #expect(Self.items(log).allSatisfy { ($0["operator"] as? String)?.contains("ops@example.com") == true || $0["operator"] as? String == "cli" })
        }
    }

    @Test("sign-ins are limited per client address", arguments: [TestEngine.sqlite])
    func signInLimit(_ engine: TestEngine) async throws {
        try await RouterServer.with(engine, schema: try Self.schema, configure: AuthHarness.fastHashing) { server in
            try await server.server.operators.add(email: "ops@example.com", password: Self.password)
            var statuses: [Int] = []
            for _ in 0..<12 {
                statuses.append(try await server.send("POST", "/console/api/session", headers: ["Content-Type": "application/json"],
                    body: Data(#"{"email":"ops@example.com","password":"wrong password 1"}"#.utf8)).status)
            }
            #expect(statuses.prefix(5).allSatisfy { $0 == 401 } && statuses.last == 429, "\(statuses)")
        }
    }

    @Test("the console lists and finds users, spaces, devices, records and files, and acts on them, logging each action", arguments: TestEngine.available)
    func readsAndActions(_ engine: TestEngine) async throws {
        try await RouterServer.with(engine, schema: try Self.schema, configure: AuthHarness.fastHashing) { server in
            try await server.server.operators.add(email: "ops@example.com", password: Self.password)
            var ada = try await SyncDevice.signUp(server, "ada")
            var grace = try await SyncDevice.signUp(server, "grace")
            let choir = try await ada.createSpace("Choir of St Ada")
            try await ada.share(choir.id, with: grace, as: .member)
            let sermon = UUID()
            let pushed = try await ada.push([
                ada.upsert("sermons", sermon, space: choir.id, ["title": "Advent in the choir", "date": "2026-11-29T10:00:00Z"]),
                ada.upsert("notes", space: choir.id, ["sermon_id": .string(sermon.lowercasedText), "text": "first note"]),
            ])
            #expect(pushed.results.allSatisfy { $0.status == .applied }, "\(pushed.results)")
            _ = try await grace.push([grace.upsert("sermons", ["title": "Grace alone", "date": "2026-12-01T10:00:00Z"])])
            let ops = try await Operator.signIn(server)

            let overview = try await ops.json("/console/api/overview")
            #expect(overview["users"] as? Int == 2 && overview["records"] as? Int == 3 && overview["database"] as? String == engine.rawValue)
            let found = try await ops.json("/console/api/users?search=ADA")
            #expect(Self.items(found).map { $0["email"] as? String } == [ada.session.user.email] && found["total"] as? Int == 1)
            #expect(Self.items(try await ops.json("/console/api/users?limit=1")).count == 1)
            #expect(try await ops.get("/console/api/users?limit=0").status == 400)
            #expect(try await ops.get("/console/api/users?offset=x").status == 400)
            let nul = try await ops.get("/console/api/users?search=%00")
            #expect(nul.status == 400 && String(decoding: nul.body, as: UTF8.self).contains("NUL"), "the message says what is wrong")

            let detail = try await ops.json("/console/api/users/\(ada.userID.lowercasedText)")
            #expect((detail["devices"] as? [[String: Any]])?.first?["name"] as? String == "Test device")
            #expect(Set((detail["spaces"] as? [[String: Any]] ?? []).compactMap { $0["name"] as? String }).contains("Choir of St Ada"))
            #expect((detail["sessions"] as? [[String: Any]])?.isEmpty == false)
            #expect(try await ops.get("/console/api/users/\(UUID().lowercasedText)").status == 404)
            #expect(try await ops.get("/console/api/users/not-a-uuid").status == 400)

            let spaces = try await ops.json("/console/api/spaces?search=st%20ada")
            let space = try #require(Self.items(spaces).first)
            #expect(space["name"] as? String == "Choir of St Ada" && space["members"] as? Int == 2 && space["changed_at"] is String)
            let spaceDetail = try await ops.json("/console/api/spaces/\(choir.id.lowercasedText)")
            #expect(Set((spaceDetail["members"] as? [[String: Any]] ?? []).compactMap { $0["email"] as? String })
                == [ada.session.user.email, grace.session.user.email])
            #expect((spaceDetail["records"] as? [[String: Any]])?.first { $0["collection"] as? String == "sermons" }?["records"] as? Int == 1)

            let collections = try await ops.json("/console/api/collections")
            #expect(Self.items(collections).first { $0["name"] as? String == "sermons" }?["records"] as? Int == 2)
            let records = try await ops.json("/console/api/collections/sermons?search=advent")
            #expect(Self.items(records).map { $0["title"] as? String } == ["Advent in the choir"])
            let ordered = try await ops.json("/console/api/collections/sermons?order=title.desc")
            #expect(Self.items(ordered).map { $0["title"] as? String } == ["Grace alone", "Advent in the choir"])
            #expect(Self.items(try await ops.json("/console/api/collections/sermons?space=\(choir.id.lowercasedText)")).count == 1)
            #expect(try await ops.get("/console/api/collections/sermons?order=nope.asc").status == 400)
            #expect(try await ops.get("/console/api/collections/no_such_table").status == 404)
            let record = try await ops.json("/console/api/collections/sermons/\(sermon.lowercasedText)")
            #expect((record["record"] as? [String: Any])?["title"] as? String == "Advent in the choir" && record["deleted"] as? Bool == false)
            #expect((record["clocks"] as? [String: Any])?["title"] is String && (record["seq"] as? Int ?? 0) > 0)
            let children = (record["children"] as? [[String: Any]])?.first { $0["collection"] as? String == "notes" }
            #expect((children?["items"] as? [[String: Any]])?.first?["text"] as? String == "first note")

            let devices = try await ops.json("/console/api/devices?search=\(grace.session.user.email)")
            #expect(Self.items(devices).count == 1 && Self.items(devices).first?["email"] as? String == grace.session.user.email)

            // Actions: revoke Grace's device, sign Ada out everywhere, ban and unban, delete Grace.
            let revoked = try await ops.change("POST", "/console/api/devices/\(grace.deviceID.lowercasedText)/revoke")
            let revokedDevice = try revoked.json()
            #expect(revoked.status == 200 && revokedDevice["trust"] as? String == "revoked")
            let afterRevoke = try await grace.get("/sync/v1/devices")
            #expect(afterRevoke.errorCode == "session_not_found", "the revoked device's session ended: \(afterRevoke.status) \(afterRevoke.text)")
            #expect(try await ops.change("POST", "/console/api/users/\(ada.userID.lowercasedText)/sign-out").status == 200)
            let afterSignOut = try await ada.get("/sync/v1/devices")
            #expect(afterSignOut.errorCode == "session_not_found", "every session of the user ended: \(afterSignOut.status) \(afterSignOut.text)")
            let banned = try await ops.change("POST", "/console/api/users/\(ada.userID.lowercasedText)/ban", ["duration": "24h"])
            let bannedUser = try banned.json()
            #expect(banned.status == 200 && bannedUser["banned_until"] is String)
            #expect(try await ops.change("POST", "/console/api/users/\(ada.userID.lowercasedText)/ban", ["duration": "forever"]).status == 400)
            let unbanned = try await ops.change("POST", "/console/api/users/\(ada.userID.lowercasedText)/ban", ["duration": "none"]).json()
            #expect(unbanned["banned_until"] is NSNull)
            #expect(try await ops.change("DELETE", "/console/api/users/\(grace.userID.lowercasedText)").status == 204)
            #expect(try await server.server.storage.user(id: grace.userID) == nil)

            let log = Self.items(try await ops.json("/console/api/log")).compactMap { $0["action"] as? String }
            #expect(Array(log.prefix(6)) == ["delete_user", "unban", "ban 24h", "sign_out_user", "revoke_device", "sign_in"], "\(log)")
            let activity = try await ops.json("/console/api/activity")
            #expect(activity["samples"] is [Any] && activity["errors"] is [Any])
            let storage = try await ops.json("/console/api/storage")
            #expect(storage["blobs"] is [String: Any])
            let settings = try await ops.get("/console/api/settings")
            #expect(settings.status == 200 && !settings.text.contains(server.server.keys.serviceRoleKey))
            #expect(try await ops.get("/console/api/nothing-here").status == 404)
        }
    }

    @Test("a console session ends 30 idle minutes after its last use and 8 hours after sign-in; a new password ends it", arguments: TestEngine.available)
    func sessionLifetime(_ engine: TestEngine) async throws {
        try await RouterServer.with(engine, schema: try Self.schema, configure: AuthHarness.fastHashing) { server in
            let storage = server.server.storage
            let record = try await server.server.operators.add(email: "ops@example.com", password: Self.password)
            let start = Date(timeIntervalSince1970: 1_800_000_000)
            func cutoffs(at time: Date) -> OperatorSessionCutoffs {
                OperatorSessionCutoffs(idle: time.addingTimeInterval(-30 * 60), absolute: time.addingTimeInterval(-8 * 3600))
            }
            try await storage.createOperatorSession(tokenHash: "a", operatorID: record.id, now: start, expiredBefore: cutoffs(at: start))
            #expect(try await storage.operatorSession(tokenHash: "a", now: start.addingTimeInterval(29 * 60), cutoffs: cutoffs(at: start.addingTimeInterval(29 * 60))) != nil)
            // Used at 29 minutes: alive until 59.
            #expect(try await storage.operatorSession(tokenHash: "a", now: start.addingTimeInterval(58 * 60), cutoffs: cutoffs(at: start.addingTimeInterval(58 * 60))) != nil)
            let idle = start.addingTimeInterval(58 * 60 + 31 * 60)
            #expect(try await storage.operatorSession(tokenHash: "a", now: idle, cutoffs: cutoffs(at: idle)) == nil, "30 idle minutes end it")

            try await storage.createOperatorSession(tokenHash: "b", operatorID: record.id, now: start, expiredBefore: cutoffs(at: start))
            var time = start
            while time < start.addingTimeInterval(8 * 3600 - 20 * 60) {
                time = time.addingTimeInterval(20 * 60)
                #expect(try await storage.operatorSession(tokenHash: "b", now: time, cutoffs: cutoffs(at: time)) != nil)
            }
            let late = start.addingTimeInterval(8 * 3600 + 60)
            #expect(try await storage.operatorSession(tokenHash: "b", now: late, cutoffs: cutoffs(at: late)) == nil, "8 hours end it, used or not")

            try await storage.createOperatorSession(tokenHash: "c", operatorID: record.id, now: late, expiredBefore: cutoffs(at: late))
            try await server.server.operators.setPassword(email: "ops@example.com", password: "another horse battery")
            #expect(try await storage.operatorSession(tokenHash: "c", now: late, cutoffs: cutoffs(at: late)) == nil, "a new password ends it")
            try await storage.createOperatorSession(tokenHash: "d", operatorID: record.id, now: late, expiredBefore: cutoffs(at: late))
            try await server.server.operators.remove(email: "ops@example.com")
            #expect(try await storage.operatorSession(tokenHash: "d", now: late, cutoffs: cutoffs(at: late)) == nil, "removing the operator ends it")
        }
    }

    @Test("the activity charts count pushes, refused mutations and conflicts the merge resolved, from the metrics", arguments: TestEngine.available)
    func activity(_ engine: TestEngine) async throws {
        try await RouterServer.with(engine, schema: try Self.schema, configure: { configuration in
            AuthHarness.fastHashing(&configuration)
            configuration.console.sampleInterval = .milliseconds(200)
        }) { server in
            try await server.server.operators.add(email: "ops@example.com", password: Self.password)
            var phone = try await SyncDevice.signUp(server, "ada")
            var tablet = try await phone.sibling()
            let sermon = UUID()
            _ = try await phone.push([phone.upsert("sermons", sermon, ["title": "Phone's title", "date": "2026-11-29T10:00:00Z"])])
            // The tablet's edit is older than the phone's: the merge keeps the phone's title (a conflict resolved).
            let older = try await tablet.push([tablet.upsert("sermons", sermon, ["title": "Tablet's older title"], now: Date().addingTimeInterval(-30))])
            #expect(older.results.map(\.status) == [.applied])
            let refused = try await tablet.push([tablet.upsert("sermons", ["no_such_field": "x", "date": "2026-11-29T10:00:00Z"])])
            #expect(refused.results.map(\.status) == [.rejected])
            let ops = try await Operator.signIn(server)
            var totals: [String: Double] = [:]
            try await eventually("the samples count two pushes of mutations, a conflict and a refusal") {
                let samples = try await ops.json("/console/api/activity")["samples"] as? [[String: Any]] ?? []
                totals = ["pushes", "conflicts", "refused"].reduce(into: [:]) { totals, key in
                    totals[key] = samples.reduce(0) { $0 + ($1[key] as? Double ?? 0) }
                }
                return totals["conflicts"] == 1 && totals["refused"] == 1 && (totals["pushes"] ?? 0) >= 3
            }
        }
    }
}
