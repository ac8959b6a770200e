import FerryCore
import FerrySecurity
@testable import FerryServer
import FerryTesting
import Foundation
import Synchronization
import Testing

/// A pull with nothing new is answered from memory (``SessionContextCache``), and every change that decides a pull
/// reaches that memory before the request that made it is answered: a sign-out, a revocation, a removed member, a
/// commit of any kind, a new key.
@Suite("Sync: no-op pulls from memory")
struct NoopPullTests {
    static var schema: String { get throws { try ExampleSchemas.text("tabletnotes.yaml") + "\n" + Self.profile } }
    static let profile = """
        profile:
          fields:
            first_name: text
        """

    /// The current cursors of `device`'s spaces, from a pull.
    static func currentCursors(_ device: SyncDevice) async throws -> [UUID: Int64] {
        var device = device
        _ = try await device.pullAll()
        return device.cursors
    }

    /// `owner` shares a new space with `guest`, whose pull (answered from memory) lists it; once `owner` removes
    /// `guest`, the next pull does not.
    static func removedMemberStopsPulling(owner: SyncDevice, guest: SyncDevice) async throws {
        let shared = try await owner.createSpace("Shared")
        try await owner.share(shared.id, with: guest, as: .member)
        let cursors = try await currentCursors(guest)
        #expect(try await guest.pull(PullRequest(cursors: cursors)).cursors[shared.id] != nil)
        let removed = try await owner.send("DELETE", "/sync/v1/spaces/\(shared.id.lowercasedText)/members/\(guest.userID.lowercasedText)", [String: String]())
        #expect(removed.status == 200 || removed.status == 204, "\(removed.text)")
        #expect(try await guest.pull(PullRequest(cursors: cursors.filter { $0.key != shared.id })).cursors[shared.id] == nil)
    }

    @Test("a pull whose cursors are current reads its session from memory; one named space unknown there reads the database", arguments: TestEngine.available)
    func fromMemory(_ engine: TestEngine) async throws {
        try await RouterServer.with(engine, schema: try Self.schema, configure: AuthHarness.fastHashing) { server in
            let contexts = try #require(server.server.hub.contexts)
            try await eventually("the PostgreSQL listener connected", timeout: .seconds(20)) { contexts.ticket() != nil }
            let device = try await SyncDevice.signUp(server, "noop")
            let cursors = try await Self.currentCursors(device)
            // A read that an event overtook is not kept (on PostgreSQL the sign-up's own events come back through
            // NOTIFY a moment later): pull until the context is held.
            try await eventually("the session's context is kept", timeout: .seconds(20)) {
                _ = try await device.pull(PullRequest(cursors: cursors))
                return contexts.statistics.sessions == 1
            }
            let before = contexts.statistics
            for _ in 0..<20 {
                let reply = try await device.pull(PullRequest(cursors: cursors))
                #expect(reply.changes.isEmpty && reply.cursors == cursors && !reply.hasMore)
            }
            let after = contexts.statistics
            // At least one hit each (two when a pull was due a last-seen write, which takes the bounded path), no miss.
            #expect(after.hits - before.hits >= 20 && after.misses == before.misses, "\(before) → \(after)")

            // A cursor ahead of what memory knows (as after a commit on another instance not heard yet) is decided
            // by the database: never a reset for a device that is ahead of this instance's memory.
            var ahead = cursors
            ahead[device.userID, default: 0] += 5
            let reply = try await device.pull(PullRequest(cursors: ahead))
            #expect(reply.resetRequired == [device.userID], "the database has no such commit either: \(reply.resetRequired)")
        }
    }

    @Test("sign-out, revocation, a removed member, a push, a profile change and a new key each reach the next pull", arguments: TestEngine.available)
    func changesReachMemory(_ engine: TestEngine) async throws {
        try await RouterServer.with(engine, schema: try Self.schema, configure: AuthHarness.fastHashing) { server in
            let contexts = try #require(server.server.hub.contexts)
            try await eventually("the PostgreSQL listener connected", timeout: .seconds(20)) { contexts.ticket() != nil }
            let (laptop, phone) = try await KeyedDevice.household(server)
            var writer = laptop.sync
            let reader = phone.sync

            // A commit by another device: its pull, answered from memory, still sees it.
            var cursors = try await Self.currentCursors(reader)
            _ = try await reader.pull(PullRequest(cursors: cursors))
            _ = try await writer.push([writer.upsert("sermons", ["title": "Grace", "date": "2026-11-21T10:00:00Z"])])
            var reply = try await reader.pull(PullRequest(cursors: cursors))
            #expect(reply.changes.map(\.collection) == ["sermons"])
            cursors = reply.cursors

            // A profile change is a commit in the personal space too.
            _ = try await reader.pull(PullRequest(cursors: cursors))
            let profile = try await writer.auth.send("PATCH", "/sync/v1/profile", json: ["fields": ["first_name": "Ada"]], token: writer.session.accessToken)
            #expect(profile.status == 200, "\(profile.text)")
            reply = try await reader.pull(PullRequest(cursors: cursors))
            #expect(reply.changes.map(\.collection) == ["profiles"])
            cursors = reply.cursors

            // A new key moves the space's key version in the next pull.
            let space = try await laptop.createEncryptedSpace()
            cursors = try await Self.currentCursors(reader)
            #expect(try await reader.pull(PullRequest(cursors: cursors)).keyVersions[space] == 0)
            let key = try SpaceKey.generate(version: 1)
            #expect(try await laptop.stored([try laptop.seal(key, space: space, to: laptop)]).map(\.status) == [.stored])
            #expect(try await reader.pull(PullRequest(cursors: cursors)).keyVersions[space] == 1)

            // A member removed from a shared space no longer pulls it.
            try await Self.removedMemberStopsPulling(owner: writer, guest: try await SyncDevice.signUp(server, "guest"))

            // A revoked device and a signed-out session are refused on their next pull.
            cursors = try await Self.currentCursors(reader)
            _ = try await reader.pull(PullRequest(cursors: cursors))
            #expect(try await laptop.revoke(phone).status == 200)
            let revoked = try await reader.send("POST", "/sync/v1/pull", PullRequest(cursors: cursors))
            #expect(revoked.status == 401 || revoked.status == 403, "\(revoked.status) \(revoked.text)")

            let other = try await SyncDevice.signUp(server, "leaving")
            let otherCursors = try await Self.currentCursors(other)
            _ = try await other.pull(PullRequest(cursors: otherCursors))
            #expect(try await other.auth.send("POST", "/auth/v1/logout", token: other.session.accessToken).status == 204)
            let signedOut = try await other.send("POST", "/sync/v1/pull", PullRequest(cursors: otherCursors))
            #expect(signedOut.status == 403 && signedOut.errorCode == "session_not_found", "\(signedOut.status) \(signedOut.text)")
        }
    }

    @Test("two instances on one PostgreSQL: a sign-out, a revocation and a removal on one are refused on the other at once; commits arrive")
    func acrossInstances() async throws {
        guard TestEngine.available.contains(.postgres) else { return }
        try await TestDatabase.with(.postgres) { database in
            var first = database.serverConfiguration, second = database.serverConfiguration
            first.schemaFiles = [try database.writeSchema(try Self.schema)]
            second.schemaFiles = first.schemaFiles
            first.auth.jwtSecret = SharedKeysTests.secret
            second.auth.jwtSecret = SharedKeysTests.secret
            first.useFastPasswordHashing()
            second.useFastPasswordHashing()
            first.dataDirectory = database.folder + "/first"
            second.dataDirectory = database.folder + "/second"
            let a = try await LiveServer.start(first), b = try await LiveServer.start(second)
            defer { Task { await a.stop(); await b.stop() } }
            for server in [a, b] {
                let contexts = try #require(server.server.hub.contexts)
                try await eventually("the listener connected", timeout: .seconds(20)) { contexts.ticket() != nil }
            }
            // The same account's devices, one on each instance.
            let laptop = try await KeyedDevice.signUp(a)
            try await laptop.registered()
            let phone = KeyedDevice(sync: try await SyncDevice(auth: AuthHarness(server: b), session: laptop.sync.session).sibling(bound: false))
            try await phone.registered()
            #expect(try await laptop.trust(phone).status == 200)
            var writer = laptop.sync
            let reader = phone.sync

            // A commit on A reaches B's memory (through NOTIFY): B's pulls, from memory, find it.
            let cursors = try await Self.currentCursors(reader)
            _ = try await reader.pull(PullRequest(cursors: cursors))
            _ = try await writer.push([writer.upsert("sermons", ["title": "Grace", "date": "2026-11-21T10:00:00Z"])])
            try await eventually("B's pull finds A's commit", timeout: .seconds(20)) {
                try await reader.pull(PullRequest(cursors: cursors)).changes.count == 1
            }

            // A member removed on A no longer pulls the space on B.
            try await Self.removedMemberStopsPulling(owner: writer, guest: try await SyncDevice.signUp(b, "guest"))

            // A device revoked on A is refused by B at once, though B answered its last pull from memory.
            let current = try await Self.currentCursors(reader)
            let memory = try #require(b.server.hub.contexts)
            try await eventually("B answers the phone's pull from memory", timeout: .seconds(20)) {
                let hits = memory.statistics.hits
                _ = try await reader.pull(PullRequest(cursors: current))
                return memory.statistics.hits > hits
            }
            #expect(try await laptop.revoke(phone).status == 200)
            let revoked = try await reader.send("POST", "/sync/v1/pull", PullRequest(cursors: current))
            #expect(revoked.status == 401 || revoked.status == 403, "\(revoked.status) \(revoked.text)")

            // A session signed out on A is refused by B at once.
            let leaving = try await SyncDevice.signUp(b, "leaving")
            let leavingCursors = try await Self.currentCursors(leaving)
            _ = try await leaving.pull(PullRequest(cursors: leavingCursors))
            let onA = AuthHarness(server: a)
            #expect(try await onA.send("POST", "/auth/v1/logout", token: leaving.session.accessToken).status == 204)
            let signedOut = try await leaving.send("POST", "/sync/v1/pull", PullRequest(cursors: leavingCursors))
            #expect(signedOut.status == 403 && signedOut.errorCode == "session_not_found", "\(signedOut.status) \(signedOut.text)")
            await a.stop()
            await b.stop()
        }
    }
}

/// The cache's own rules, without a server.
@Suite("Sync: the session context cache")
struct SessionContextCacheTests {
    static func context(user: UUID = UUID(), spaces: [(UUID, Int64)]) -> SessionContext {
        let now = Date()
        return SessionContext(
            session: SessionRecord(id: UUID(), userID: user, createdAt: now, refreshedAt: now),
            spaces: spaces.map { SpaceSummary(id: $0.0, name: "s", isPersonal: false, isEncrypted: false, role: .owner, seq: $0.1) }
        )
    }

    @Test("a context read before a sign-out is not stored after it; one read before a commit answers with the commit")
    func races() async throws {
        let cache = SessionContextCache(lifetime: .seconds(30), capacity: 10, listening: true)
        let space = UUID()
        let context = Self.context(spaces: [(space, 5)])
        // Read, then the account changed, then the read tries to store.
        let stale = try #require(cache.ticket())
        cache.apply(.accountChanged(context.session.userID))
        cache.store(context, ticket: stale)
        #expect(await cache.context(session: context.session.id) == nil)
        // Read, then a commit was heard, then stored: the commit's number is answered.
        let ticket = try #require(cache.ticket())
        cache.apply(.committed(space: space, seq: 9, origin: nil))
        cache.store(context, ticket: ticket)
        #expect(await cache.context(session: context.session.id)?.spaces?.first?.seq == 9)
        cache.apply(.committed(space: space, seq: 7, origin: nil))
        #expect(await cache.context(session: context.session.id)?.spaces?.first?.seq == 9, "an older number never lowers it")
    }

    @Test("nothing is kept while events are not heard, nor past a reconnect, a key change of a listed space, or the lifetime")
    func drops() async throws {
        let cache = SessionContextCache(lifetime: .milliseconds(300), capacity: 10, listening: false)
        let space = UUID(), other = UUID()
        let context = Self.context(spaces: [(space, 1)]), second = Self.context(spaces: [(other, 1)])
        #expect(cache.ticket() == nil)
        cache.setListening(true)
        for item in [context, second] { cache.store(item, ticket: try #require(cache.ticket())) }
        #expect(cache.statistics.sessions == 2)
        cache.apply(.keysChanged(space: space))
        #expect(await cache.context(session: context.session.id) == nil)
        #expect(await cache.context(session: second.session.id) != nil)
        cache.apply(.resync)
        #expect(cache.statistics.sessions == 0)
        cache.store(context, ticket: try #require(cache.ticket()))
        cache.setListening(false)
        #expect(await cache.context(session: context.session.id) == nil)
        #expect(cache.ticket() == nil)
        cache.setListening(true)
        cache.store(context, ticket: try #require(cache.ticket()))
        try await Task.sleep(for: .milliseconds(400))
        #expect(await cache.context(session: context.session.id) == nil, "past its lifetime")
        // Full: the oldest-or-any entry makes room; never more than the capacity.
        for _ in 0..<25 { cache.store(Self.context(spaces: [(space, 1)]), ticket: try #require(cache.ticket())) }
        #expect(cache.statistics.sessions == 10)
    }
}

/// The fence: a pull answered from memory on PostgreSQL first hears every event committed before it arrived.
@Suite("Sync: the event fence")
struct EventFenceTests {
    @Test("waiters share the next fence sent after they asked; a fence already on its way releases none of them")
    func ordering() async throws {
        let fence = EventFence()
        #expect(await fence.wait() == false, "no listener: cannot tell")
        fence.setListening(true)
        let first = Task { await fence.wait() }
        try await eventually("the first waiter asks for a fence") { fence.nextFence() != nil }
        // Fence 1 is on its way; a waiter asking now needs fence 2.
        let second = Task { await fence.wait() }
        try await Task.sleep(for: .milliseconds(50))
        #expect(fence.heard("f \(fence.instance) 1"))
        #expect(await first.value == true)
        #expect(fence.nextFence() == "f \(fence.instance) 2", "the second waiter wanted another fence")
        #expect(fence.heard("f \(UUID().lowercasedText) 2"), "another instance's fence is no event, and releases nothing here")
        fence.setListening(false)
        #expect(await second.value == false, "the listener stopped: cannot tell")
    }

    @Test("the watchdog's wait for a numbered fence: released when it is heard, at once when it was, refused when the listener stops")
    func numbered() async throws {
        let fence = EventFence()
        fence.setListening(true)
        let third = Task { await fence.wait(for: 3) }
        try await Task.sleep(for: .milliseconds(50))
        #expect(fence.heard("f \(fence.instance) 2"))
        #expect(fence.heard("f \(fence.instance) 3"))
        #expect(await third.value == true)
        #expect(await fence.wait(for: 1) == true, "heard already")
        let fifth = Task { await fence.wait(for: 5) }
        try await Task.sleep(for: .milliseconds(50))
        fence.setListening(false)
        #expect(await fifth.value == false)
    }

    @Test("a waiter whose request gave up, or whose fence could not be sent, reads the database")
    func failures() async throws {
        let fence = EventFence()
        fence.setListening(true)
        let cancelled = Task { await fence.wait() }
        try await Task.sleep(for: .milliseconds(50))
        cancelled.cancel()
        #expect(await cancelled.value == false)
        _ = fence.nextFence()  // the fence the cancelled waiter asked for
        let unsent = Task { await fence.wait() }
        try await eventually("a fence is wanted") { fence.nextFence() != nil }
        fence.sendFailed()
        #expect(await unsent.value == false)
    }

    @Test("an overdue fence sends every waiting pull, and every pull after them, to the database until the watchdog hears it after all")
    func slowListener() async throws {
        let fence = EventFence()
        fence.setListening(true)
        let waiting = Task { await fence.wait() }
        try await eventually("the pull asks for a fence") { fence.nextFence() != nil }
        let number = fence.lastSent
        fence.setSlow(true)  // the watchdog's first wait timed out
        let watchdog = Task { await fence.wait(for: number) }
        #expect(await waiting.value == false, "released to the database")
        #expect(await fence.wait() == false, "no pull waits while the fence is overdue")
        #expect(fence.nextFence() == nil, "and none asks for another")
        #expect(fence.heard("f \(fence.instance) \(number)"))
        #expect(await watchdog.value == true, "the watchdog still hears it late")
        fence.setSlow(false)
        let next = Task { await fence.wait() }
        try await eventually("pulls wait for fences again") { fence.nextFence() != nil }
        #expect(fence.heard("f \(fence.instance) \(fence.lastSent)"))
        #expect(await next.value == true)
    }

    @Test("a wait whose deadline passes before its fence is heard reads the database; one past its deadline already does not wait")
    func deadline() async throws {
        let fence = EventFence()
        fence.setListening(true)
        let started = ContinuousClock.now
        #expect(await fence.wait(until: started + .milliseconds(100)) == false, "no fence came back in time")
        #expect(ContinuousClock.now - started >= .milliseconds(100))
        #expect(ContinuousClock.now - started < .seconds(5), "released by its deadline, not by anything else")
        #expect(await fence.wait(until: .now - .seconds(1)) == false)
        // The released waiter is gone: the fence it asked for, heard late, releases only those that wait now.
        let sent = try #require(fence.nextFence())
        let finished = Mutex(false)
        let later = Task {
            defer { finished.withLock { $0 = true } }
            return await fence.wait(until: .now + .seconds(30))
        }
        try await eventually("the later waiter asks for a fence") { fence.nextFence() != nil }
        #expect(fence.heard(Substring(sent)))
        try await Task.sleep(for: .milliseconds(50))
        #expect(!finished.withLock { $0 }, "a fence sent before the later waiter asked does not release it")
        #expect(fence.heard("f \(fence.instance) \(fence.lastSent)"))
        #expect(await later.value == true)
    }
}
