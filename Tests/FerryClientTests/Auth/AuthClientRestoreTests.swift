import FerryClient
import FerryCore
import FerryTesting
import Foundation
import Testing

@Suite("AuthClient: restore at launch")
struct AuthClientRestoreTests {
    @Test("no saved session: signed out, no request")
    func nothingSaved() async throws {
        let server = FakeAuthServer()
        #expect(try await server.makeClient().restore() == .signedOut)
        #expect(server.totalRequests == 0)
    }

    @Test("an access token with more than 30 s left: signed in without a request")
    func freshToken() async throws {
        let server = FakeAuthServer()
        let session = server.issueSession(expiresIn: 31)
        let auth = server.makeClient(store: InMemorySessionStore(session))
        #expect(try await auth.restore() == .signedIn(session))
        #expect(server.totalRequests == 0)
    }

    @Test("an expiring access token is refreshed; the rotated session is saved")
    func expiringToken() async throws {
        let server = FakeAuthServer()
        let session = server.issueSession(expiresIn: 30)
        let store = InMemorySessionStore(session)
        let outcome = try await server.makeClient(store: store).restore()
        let restored = try #require(store.load())
        #expect(outcome == .signedIn(restored))
        #expect(restored.refreshToken != session.refreshToken)
        #expect(restored.accessToken != session.accessToken)
        #expect(server.count(.refresh) == 1)
    }

    @Test(
        "a network failure, timeout, 5xx or rate limit during the refresh keeps the session file as it was",
        arguments: [
            FakeAuthServer.Failure.network, .timeout, .status(503, .unavailable), .status(500, .internalError),
            .raw(502, body: "<html>Bad gateway</html>"), .status(429, .overRequestRateLimit, retryAfter: 5),
        ]
    )
    func refreshFailsOffline(failure: FakeAuthServer.Failure) async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let server = FakeAuthServer()
        let session = server.issueSession(expiresIn: -60)
        let store = FileSessionStore(fileURL: folder.url.appending(path: "session.json"))
        try store.save(session)
        let before = try Data(contentsOf: store.fileURL)
        server.fail(.refresh, with: failure)
        let auth = server.makeClient(store: store)
        #expect(try await auth.restore() == .offline(session))
        #expect(try Data(contentsOf: store.fileURL) == before)
        #expect(try await auth.session == session)
        var states = auth.stateChanges().makeAsyncIterator()
        #expect(await states.next() == .offline(session.user))
    }

    @Test(
        "the server's explicit session-gone codes delete the session",
        arguments: [ErrorCode.sessionNotFound, .refreshTokenNotFound, .refreshTokenAlreadyUsed, .sessionExpired, .userNotFound]
    )
    func sessionGone(code: ErrorCode) async throws {
        let server = FakeAuthServer()
        let store = InMemorySessionStore(server.issueSession(expiresIn: 5))
        server.fail(.refresh, with: .status(code == .sessionNotFound ? 403 : 400, code))
        let auth = server.makeClient(store: store)
        #expect(try await auth.restore() == .signedOut)
        #expect(store.load() == nil)
        #expect(try await auth.session == nil)
    }

    @Test("other refusals (not session-gone) keep the session")
    func otherRefusalKeepsSession() async throws {
        let server = FakeAuthServer()
        let session = server.issueSession(expiresIn: 5)
        let store = InMemorySessionStore(session)
        server.fail(.refresh, with: .status(400, .validationFailed))
        #expect(try await server.makeClient(store: store).restore() == .offline(session))
        #expect(store.load() == session)
    }

    @Test("an unreadable session file is an error, not a sign-out")
    func unreadableStore() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let file = folder.url.appending(path: "session.json")
        try Data("not json".utf8).write(to: file)
        let auth = FakeAuthServer().makeClient(store: FileSessionStore(fileURL: file))
        let error = await #expect(throws: AuthError.self) { try await auth.restore() }
        #expect(error?.code == .sessionStoreFailed)
        #expect(FileManager.default.fileExists(atPath: file.path))
    }
}
