import FerryClient
import FerryCore
import FerryServer
import FerryTesting
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

/// The realtime stream end to end: a real server (one or two instances), real WebSocket connections, real engines.
@Suite("Realtime, end to end")
struct RealtimeEndToEndTests {
    /// A signed-in device whose engine keeps the stream open; no periodic sync, so only the stream (or an explicit
    /// `sync()`) brings other devices' writes.
    struct Device {
        let auth: AuthClient
        let client: SyncClient
        let store: LocalStore
        let engine: SyncEngine

        static func signIn(_ baseURL: URL, anonKey: String, email: String, signUp: Bool) async throws -> Device {
            let account = try await SignedInAccount.open(baseURL, apiKey: anonKey, email: email, signUp: signUp)
            let (client, store) = (account.client, account.store)
            try await client.bindTestDevice(store)
            var configuration = SyncEngine.Configuration.manualSync(localChangeDebounce: .seconds(3600), realtime: true)
            configuration.realtimeBackoff = BackoffPolicy(initial: .milliseconds(100), maximum: .seconds(1))
            return Device(auth: account.auth, client: client, store: store, engine: SyncEngine(store: store, remote: client, configuration: configuration))
        }

        /// Waits until the stream is open and the sync it triggers is over.
        func waitUntilStreaming() async throws {
            try await eventually("\(engine.status)") { engine.status.realtime == .connected && !engine.status.isSynchronizing }
            _ = try await engine.sync()
        }

        /// Saves a sermon here, pushes it and waits until `listener` holds it; `true` when it came carried in the
        /// stream's poke and was applied without a sync.
        func writeSermon(_ title: String, reaching listener: Device) async throws -> Bool {
            let syncsBefore = await listener.engine.startedSyncCount
            let streamedBefore = listener.engine.status.lastStreamedAt
            let sermon = try store.save(collection: "sermons", fields: ["title": .string(title), "date": "2026-11-29T10:00:00Z"])
            try await engine.sync()
            try await eventually("\(title) never reached the listening device") {
                try listener.store.fetch(collection: "sermons", id: sermon.id) != nil
            }
            let streamedAfter = listener.engine.status.lastStreamedAt
            return await listener.engine.startedSyncCount == syncsBefore && streamedAfter != nil && streamedAfter != streamedBefore
        }

        /// Writes sermons here until one reaches `listener` carried, at most `attempts`; the number of writes it took.
        ///
        /// A write may rightly come as a plain poke: while the listener's stream has an account check pending (an
        /// account-change notification heard late, a listener reconnecting under load), the server carries no data.
        /// The check is over within a moment, so one of the next writes must be carried.
        func writeUntilCarried(reaching listener: Device, attempts: Int = 4) async throws -> Int? {
            for attempt in 1...attempts {
                if try await writeSermon("Carried? \(attempt)", reaching: listener) { return attempt }
                print("realtime: write \(attempt) reached the listener by a pull; trying again")
                try await Task.sleep(for: .milliseconds(500))
            }
            return nil
        }
    }

    @Test("a write on one device reaches a device that only listens: carried in the poke and applied without a sync, or through a poke and a pull", arguments: TestEngine.available, [true, false])
    func pokeDeliversWrite(_ engine: TestEngine, carries: Bool) async throws {
        try await LiveServer.with(engine, schema: try ExampleSchemas.text("tabletnotes.yaml"), configure: { configuration in
            configuration.useFastPasswordHashing()
            if !carries { configuration.realtime.carriedChangeBytes = 0 }
        }) { server in
            let email = uniqueEmail("rt"), key = server.server.keys.anonKey
            let phone = try await Device.signIn(server.baseURL, anonKey: key, email: email, signUp: true)
            let pad = try await Device.signIn(server.baseURL, anonKey: key, email: email, signUp: false)
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await phone.engine.run() }
                group.addTask { try await pad.engine.run() }
                defer { group.cancelAll() }
                try await pad.waitUntilStreaming()
                if carries {
                    let writes = try await phone.writeUntilCarried(reaching: pad)
                    #expect(writes != nil, "a write applied from the poke, without a sync")
                    print("realtime: carried to the pad at write \(writes.map(String.init) ?? "none") (\(engine))")
                    #expect(try pad.store.cursors() == phone.store.cursors(), "the pad's cursor moved with the carried changes")
                    return
                }
                let before = await pad.engine.startedSyncCount
                let sermon = try phone.store.save(collection: "sermons", fields: ["title": "Advent 1", "date": "2026-11-29T10:00:00Z"])
                let start = ContinuousClock.now
                try await phone.engine.sync()
                try await eventually("the sermon never reached the pad") { try pad.store.fetch(collection: "sermons", id: sermon.id) != nil }
                let latency = ContinuousClock.now - start
                #expect(await pad.engine.startedSyncCount > before)
                // The record is in the store a moment before the sync's report is.
                try await eventually("the pad's sync was not the poke's") { await pad.engine.lastReport?.triggers.contains("realtimePoke") == true }
                print("realtime: push acknowledged → applied on the pad in \(latency) (\(engine), poke and pull)")
            }
        }
    }

    @Test("two server instances on one PostgreSQL database: a device watching instance 2 gets a write made through instance 1")
    func twoInstances() async throws {
        guard TestEngine.available.contains(.postgres) else { return }
        try await TestDatabase.with(.postgres) { database in
            let configuration = try database.endToEndConfiguration(schema: try ExampleSchemas.text("tabletnotes.yaml"))
            let first = try await LiveServer.start(configuration)
            let second = try await LiveServer.start(configuration)
            defer { Task { await first.stop(); await second.stop() } }
            let email = uniqueEmail("rt"), key = first.server.keys.anonKey
            #expect(second.server.keys.anonKey == key, "instances of one deployment share their keys")
            let phone = try await Device.signIn(first.baseURL, anonKey: key, email: email, signUp: true)
            let pad = try await Device.signIn(second.baseURL, anonKey: key, email: email, signUp: false)
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await phone.engine.run() }
                group.addTask { try await pad.engine.run() }
                defer { group.cancelAll() }
                try await pad.waitUntilStreaming()
                let writes = try await phone.writeUntilCarried(reaching: pad)
                #expect(writes != nil, "instance 2 read a commit it heard of and carried it in the poke")
            }
            await first.stop()
            await second.stop()
        }
    }

    @Test("a device whose connection is cut reconnects, syncs, and misses nothing written meanwhile", arguments: TestEngine.available)
    func reconnectCatchesUp(_ engine: TestEngine) async throws {
        try await LiveServer.with(engine, schema: try ExampleSchemas.text("tabletnotes.yaml"), configure: { $0.useFastPasswordHashing() }) { server in
            let proxy = try await FaultProxy.start(forwardingTo: server.port, configuration: { var c = FaultProxy.Configuration(seed: 14); c.isFaulty = false; return c }())
            let email = uniqueEmail("rt"), key = server.server.keys.anonKey
            let phone = try await Device.signIn(server.baseURL, anonKey: key, email: email, signUp: true)
            let pad = try await Device.signIn(proxy.baseURL, anonKey: key, email: email, signUp: false)
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await phone.engine.run() }
                group.addTask { try await pad.engine.run() }
                defer { group.cancelAll() }
                try await pad.waitUntilStreaming()

                // The network goes: the stream drops and cannot come back while three sermons are written.
                proxy.setRefusing(true)
                proxy.cutConnections()
                try await eventually("the pad never noticed the cut") { pad.engine.status.realtime != .connected }
                var written: [UUID] = []
                for index in 1...3 {
                    written.append(try phone.store.save(collection: "sermons", fields: ["title": .string("Offline \(index)"), "date": "2026-11-29T10:00:00Z"]).id)
                }
                try await phone.engine.sync()
                #expect(try written.allSatisfy { try pad.store.fetch(collection: "sermons", id: $0) == nil })

                // It comes back: the stream reopens and the sync after the reconnection brings all three.
                proxy.setRefusing(false)
                try await eventually("the pad never caught up") { try written.allSatisfy { try pad.store.fetch(collection: "sermons", id: $0) != nil } }
                try await eventually("the stream never reopened") { pad.engine.status.realtime == .connected }
                try await eventually("the catch-up was not the reconnection's sync") { await pad.engine.lastReport?.triggers.contains("realtimeSync") == true }
            }
            await proxy.stop()
        }
    }

    @Test("membership changes reach open streams: joining a space asks for a sync, and the space's commits then poke", arguments: TestEngine.available)
    func membershipOnOpenStream(_ engine: TestEngine) async throws {
        try await LiveServer.with(engine, schema: try ExampleSchemas.text("tabletnotes.yaml"), configure: { $0.useFastPasswordHashing() }) { server in
            let key = server.server.keys.anonKey
            let owner = try await Device.signIn(server.baseURL, anonKey: key, email: uniqueEmail("rt"), signUp: true)
            let guestEmail = uniqueEmail("rt")
            let guest = try await Device.signIn(server.baseURL, anonKey: key, email: guestEmail, signUp: true)
            let messages = MessageLog()
            let stream = Task { try await guest.client.openStream { await messages.append($0) } }
            defer { stream.cancel() }
            try await eventually("no ready message") { await messages.all.first.map { if case .ready = $0 { true } else { false } } == true }

            let space = try await owner.client.createSpace(CreateSpaceRequest(name: "Choir"))
            let invitation = try await owner.client.invite(InviteRequest(email: guestEmail, role: .member), to: space.id)
            _ = try await guest.client.acceptInvitation(code: try #require(invitation.code))
            try await eventually("joining did not ask the open stream to sync") { await messages.all.contains(.sync) }

            _ = try owner.store.save(collection: "sermons", space: space.id, fields: ["title": "Shared", "date": "2026-11-29T10:00:00Z"])
            let ownerEngine = Task { try await owner.engine.run() }
            defer { ownerEngine.cancel() }
            try await owner.engine.sync()
            try await eventually("a commit in the joined space did not poke the guest's stream") {
                await messages.all.contains { if case .change(let id, _, _) = $0 { id == space.id } else { false } }
            }
            // The stream checked its session and reloaded its spaces before it asked for the sync: the poke carries
            // the commit's changes.
            let carried = await messages.all.compactMap { if case .change(space.id, _, let carried?) = $0 { carried } else { nil } }
            #expect(carried.first?.pull.changes.map(\.fields["title"]) == [.string("Shared")])
        }
    }

    @Test("a stream's request context is let go once the stream ends (the WebSocket handler reference held it in a cycle)")
    func streamContextReleased() async throws {
        try await LiveServer.with(.sqlite, schema: try ExampleSchemas.text("tabletnotes.yaml"), configure: { $0.useFastPasswordHashing() }) { server in
            let device = try await Device.signIn(server.baseURL, anonKey: server.server.keys.anonKey, email: uniqueEmail("rt"), signUp: true)
            let before = FerryRequestContext.alive
            // Other tests' requests come and go meanwhile: 100 leaked contexts stand out of that noise, none do not.
            for _ in 0..<100 {
                let ready = MessageLog()
                let stream = Task { try await device.client.openStream { await ready.append($0) } }
                try await eventually("no ready message") { await !ready.all.isEmpty }
                stream.cancel()
                _ = await stream.result
            }
            try await eventually("stream contexts stayed alive: \(FerryRequestContext.alive) against \(before) before", timeout: .seconds(20)) {
                FerryRequestContext.alive < before + 40
            }
        }
    }

    @Test("the stream closes with 4001 when its token expires", arguments: TestEngine.available)
    func streamEndsWhenTokenExpires(_ engine: TestEngine) async throws {
        try await LiveServer.with(engine, schema: try ExampleSchemas.text("tabletnotes.yaml"), configure: { configuration in
            configuration.useFastPasswordHashing()
            configuration.auth.accessTokenLifetime = .seconds(3)
        }) { server in
            let device = try await Device.signIn(server.baseURL, anonKey: server.server.keys.anonKey, email: uniqueEmail("rt"), signUp: true)
            // A loaded machine can take longer than the token lives to open a stream: each attempt refreshes first.
            var expired: StreamClosure?
            for _ in 0..<5 where expired == nil {
                expired = try? await device.client.openStream { _ in }
            }
            #expect(expired?.isTokenExpired == true, "\(String(describing: expired))")
        }
    }

    @Test("a server shutting down closes its streams with 1001 (going away), so their devices spread their reconnections", arguments: TestEngine.available)
    func streamClosesGoingAwayOnShutdown(_ engine: TestEngine) async throws {
        // `with` stops the server (a second time, which does nothing) and deletes its database even if a step throws.
        try await LiveServer.with(engine, schema: try ExampleSchemas.text("tabletnotes.yaml"), configure: { $0.useFastPasswordHashing() }) { server in
            let device = try await Device.signIn(server.baseURL, anonKey: server.server.keys.anonKey, email: uniqueEmail("rt"), signUp: true)
            let messages = MessageLog()
            let stream = Task { try await device.client.openStream { await messages.append($0) } }
            defer { stream.cancel() }
            try await eventually("no ready message") { await !messages.all.isEmpty }
            await server.stop()
            let ended = try await stream.value
            #expect(ended.code == 1001 && ended.isServerGoingAway, "\(ended)")
        }
    }

    @Test("a refused stream (503 in a connect storm) closes its socket and reports the refusal's Retry-After without asking again: ten refusals leave no connection half-closed")
    func refusedStreamClosesItsSocket() async throws {
        try await LiveServer.with(.sqlite, schema: try ExampleSchemas.text("tabletnotes.yaml"), configure: { configuration in
            configuration.useFastPasswordHashing()
            configuration.realtime.maximumOpeningStreams = 0  // every stream request is refused
        }) { server in
            let device = try await Device.signIn(server.baseURL, anonKey: server.server.keys.anonKey, email: uniqueEmail("rt"), signUp: true)
            for _ in 1...10 {
                let refusal = await #expect(throws: RemoteError.self) { try await device.client.openStream { _ in } }
                #expect(refusal?.status == 503 && refusal?.retryAfter == .seconds(1), "\(String(describing: refusal))")
            }
            // The server closed each refused connection; before, this side never did (CLOSE_WAIT until the process ended).
            try await eventually("sockets to the server left half-closed: \(Self.halfClosed(to: server.port))") { Self.halfClosed(to: server.port) == 0 }
        }
    }

    /// A guard on `StreamSocket`'s own upgrade: WSClient's ended here too; what it lacked was a bound on an open, silent one.
    @Test("a stream whose connection closes before the upgrade is answered ends at once with an error")
    func closedBeforeAnswer() async throws {
        try await LiveServer.with(.sqlite, schema: try ExampleSchemas.text("tabletnotes.yaml"), configure: { $0.useFastPasswordHashing() }) { server in
            let proxy = try await FaultProxy.start(forwardingTo: server.port, configuration: { var c = FaultProxy.Configuration(seed: 15); c.isFaulty = false; return c }())
            defer { Task { await proxy.stop() } }
            let device = try await Device.signIn(proxy.baseURL, anonKey: server.server.keys.anonKey, email: uniqueEmail("rt"), signUp: true)
            proxy.setRefusing(true)  // accepts each connection and closes it before any answer
            let outcome = try await withThrowingTaskGroup(of: String.self) { group in
                group.addTask { (try? await device.client.openStream { _ in }).map { "closed \($0)" } ?? "failed" }
                group.addTask {
                    try await Task.sleep(for: .seconds(8))  // under the 10 s upgrade timeout: only the close can end it
                    return "still waiting"
                }
                defer { group.cancelAll() }
                return try await group.next() ?? "nothing"
            }
            #expect(outcome == "failed", "\(outcome)")
        }
    }

    /// This process's TCP sockets to `port` that the peer closed and this side has not (`CLOSE_WAIT`, Linux's
    /// `/proc/net/tcp` state 08); 0 where there is no such file.
    static func halfClosed(to port: Int) -> Int {
        guard let table = try? String(contentsOfFile: "/proc/net/tcp", encoding: .utf8) else { return 0 }
        let remote = String(format: ":%04X", port)
        return table.split(separator: "\n").dropFirst().filter { line in
            let fields = line.split(separator: " ")
            return fields.count > 3 && fields[2].hasSuffix(remote) && fields[3] == "08"
        }.count
    }

    /// With the default token lifetime: under a loaded machine a 3-second token could expire before the sign-out.
    @Test("the stream closes with 4003 when its session is signed out", arguments: TestEngine.available)
    func streamEndsWhenSignedOut(_ engine: TestEngine) async throws {
        try await LiveServer.with(engine, schema: try ExampleSchemas.text("tabletnotes.yaml"), configure: { $0.useFastPasswordHashing() }) { server in
            let device = try await Device.signIn(server.baseURL, anonKey: server.server.keys.anonKey, email: uniqueEmail("rt"), signUp: true)
            let messages = MessageLog()
            let stream = Task { try await device.client.openStream { await messages.append($0) } }
            try await eventually("no ready message") { await !messages.all.isEmpty }
            try await device.auth.signOut()
            let ended = try await stream.value
            #expect(ended.isSessionEnded, "\(ended)")
        }
    }

    @Test("the stream closes with 4003 when its session ends another way: another device changes the password, or its refresh token is reused",
          arguments: TestEngine.available)
    func streamEndsWhenSessionEnds(_ engine: TestEngine) async throws {
        try await LiveServer.with(engine, schema: try ExampleSchemas.text("tabletnotes.yaml"), configure: { configuration in
            configuration.useFastPasswordHashing()
            configuration.auth.refreshTokenReuseInterval = .milliseconds(1)
        }) { server in
            let key = server.server.keys.anonKey
            let email = uniqueEmail("rt")
            let device = try await Device.signIn(server.baseURL, anonKey: key, email: email, signUp: true)
            let other = try await Device.signIn(server.baseURL, anonKey: key, email: email, signUp: false)
            let messages = MessageLog()
            let stream = Task { try await device.client.openStream { await messages.append($0) } }
            try await eventually("no ready message") { await !messages.all.isEmpty }
            _ = try await other.auth.updateUser(password: "correct horse 2")
            #expect(try await stream.value.isSessionEnded, "a password change elsewhere ends this session's stream")

            // The other session's refresh token, used twice: the second use revokes the session, and its stream ends.
            let otherMessages = MessageLog()
            let otherStream = Task { try await other.client.openStream { await otherMessages.append($0) } }
            try await eventually("no ready message") { await !otherMessages.all.isEmpty }
            let current = try await other.auth.session
            let refreshToken = try #require(current?.refreshToken)
            func refresh(_ token: String) async throws -> (status: Int, next: String?) {
                var request = URLRequest(url: server.url("/auth/v1/token?grant_type=refresh_token"))
                request.httpMethod = "POST"
                request.setValue(key, forHTTPHeaderField: "apikey")
                request.setValue("application/json", forHTTPHeaderField: "Content-Type")
                request.httpBody = try JSONSerialization.data(withJSONObject: ["refresh_token": token])
                let (body, response) = try await URLSession.shared.data(for: request)
                let next = (try? JSONSerialization.jsonObject(with: body) as? [String: Any])?["refresh_token"] as? String
                return ((response as? HTTPURLResponse)?.statusCode ?? 0, next)
            }
            // Two rotations, then the first token again: not the active token's parent, so it is reuse.
            let second = try #require(try await refresh(refreshToken).next)
            #expect(try await refresh(second).status == 200)
            try await Task.sleep(for: .milliseconds(50))
            #expect(try await refresh(refreshToken).status == 400, "the reused token is refused")
            #expect(try await otherStream.value.isSessionEnded, "refresh-token reuse ends the session's stream")
        }
    }

    @Test("refusals are ordinary JSON errors: no upgrade 426, no key or token 401, too many streams 429; browsers authenticate by query",
          arguments: TestEngine.available)
    func refusals(_ engine: TestEngine) async throws {
        try await LiveServer.with(engine, schema: try ExampleSchemas.text("tabletnotes.yaml"), configure: { configuration in
            configuration.useFastPasswordHashing()
            configuration.realtime.maximumStreamsPerAccount = 1
        }) { server in
            let key = server.server.keys.anonKey
            let device = try await Device.signIn(server.baseURL, anonKey: key, email: uniqueEmail("rt"), signUp: true)
            let token = try await device.auth.accessToken()
            func get(_ headers: [String: String], query: String = "") async throws -> (Int, String) {
                var request = URLRequest(url: URL(string: server.url("/sync/v1/stream").absoluteString + query)!)
                for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
                let (data, response) = try await URLSession.shared.data(for: request)
                return ((response as? HTTPURLResponse)?.statusCode ?? 0, String(decoding: data, as: UTF8.self))
            }
            let plain = try await get(["apikey": key, "Authorization": "Bearer \(token)"])
            #expect(plain.0 == 426 && plain.1.contains("upgrade_required"), "\(plain)")
            // Spelled otherwise than the upgrade path reads it, an upgrade would reach the route as a plain request:
            // refused, not answered 200 with no stream (which held the request's context until the connection closed).
            let misspelled = try await get(["apikey": key, "Authorization": "Bearer \(token)", "Upgrade": "WebSocket"])
            #expect(misspelled.0 == 426 || misspelled.0 == 400, "\(misspelled)")
            let byQuery = try await get([:], query: "?apikey=\(key)&access_token=\(token)")
            #expect(byQuery.0 == 426, "query parameters authenticate too: \(byQuery)")
            let noKey = try await get(["Authorization": "Bearer \(token)"])
            #expect(noKey.0 == 401 && noKey.1.contains("invalid_api_key"), "\(noKey)")
            let noToken = try await get(["apikey": key])
            #expect(noToken.0 == 401 && noToken.1.contains("no_authorization"), "\(noToken)")
            let badToken = try await get(["apikey": key, "Authorization": "Bearer nonsense"])
            #expect(badToken.0 == 401 && badToken.1.contains("bad_jwt"), "\(badToken)")

            let messages = MessageLog()
            let first = Task { try await device.client.openStream { await messages.append($0) } }
            defer { first.cancel() }
            try await eventually("no ready message") { await !messages.all.isEmpty }
            let metrics = String(decoding: try await URLSession.shared.data(from: server.url("/metrics")).0, as: UTF8.self)
            #expect(metrics.contains("ferry_realtime_streams 1"), "the open stream is counted in /metrics")
            await #expect {
                _ = try await device.client.openStream { _ in }
            } throws: { error in
                (error as? RemoteError)?.code == .tooManyStreams && (error as? RemoteError)?.status == 429
            }
        }
    }
}

/// The messages a stream received, in order.
actor MessageLog {
    private(set) var all: [StreamMessage] = []

    func append(_ message: StreamMessage) {
        all.append(message)
    }
}
