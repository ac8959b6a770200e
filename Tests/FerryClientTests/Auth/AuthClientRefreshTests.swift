import FerryClient
import FerryCore
import Foundation
import Testing

@Suite("AuthClient: access tokens and refresh")
struct AuthClientRefreshTests {
    @Test("50 concurrent callers on an expiring token cause exactly one refresh and all get the same token")
    func singleFlight() async throws {
        let server = FakeAuthServer()
        let session = server.issueSession(expiresIn: 20)
        let store = InMemorySessionStore(session)
        let auth = server.makeClient(store: store)
        let callers = Latch(count: 50)
        // The refresh request is answered only once all 50 callers have asked for a token.
        server.holdRefreshes { await callers.wait() }
        let tokens = try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<50 {
                group.addTask {
                    callers.arrive()
                    return try await auth.accessToken()
                }
            }
            return try await group.reduce(into: [String]()) { $0.append($1) }
        }
        #expect(tokens.count == 50)
        #expect(server.count(.refresh) == 1)
        #expect(Set(tokens).count == 1)
        #expect(tokens.first != session.accessToken)
        #expect(store.load()?.accessToken == tokens.first)
    }

    @Test("concurrent refresh() callers share one request")
    func concurrentRefreshCalls() async throws {
        let server = FakeAuthServer()
        let auth = server.makeClient(store: InMemorySessionStore(server.issueSession()))
        let callers = Latch(count: 10)
        server.holdRefreshes { await callers.wait() }
        let sessions = try await withThrowingTaskGroup(of: AuthSession.self) { group in
            for _ in 0..<10 {
                group.addTask {
                    callers.arrive()
                    return try await auth.refresh()
                }
            }
            return try await group.reduce(into: [AuthSession]()) { $0.append($1) }
        }
        // Every call succeeded: no two refreshes ever raced with the same (rotating) refresh token.
        #expect(sessions.count == 10)
        #expect(server.count(.refresh) >= 1)
        let stored = try #require(try await auth.session)
        #expect(sessions.contains(stored))
    }

    @Test("a token with more than 30 s left is returned as is")
    func freshTokenNeedsNoRequest() async throws {
        let server = FakeAuthServer()
        let session = server.issueSession(expiresIn: 120)
        let auth = server.makeClient(store: InMemorySessionStore(session))
        #expect(try await auth.accessToken() == session.accessToken)
        server.clock.advance(by: 89)
        #expect(try await auth.accessToken() == session.accessToken)
        server.clock.advance(by: 1)
        #expect(try await auth.accessToken() != session.accessToken)
        #expect(server.count(.refresh) == 1)
    }

    @Test(
        "a failed refresh with a token that has not expired yet: that token is returned and the session kept",
        arguments: [FakeAuthServer.Failure.network, .status(503, .unavailable), .status(429, .overRequestRateLimit)]
    )
    func failedRefreshButStillValid(failure: FakeAuthServer.Failure) async throws {
        let server = FakeAuthServer()
        let session = server.issueSession(expiresIn: 20)
        let store = InMemorySessionStore(session)
        let auth = server.makeClient(store: store)
        server.fail(.refresh, with: failure)
        #expect(try await auth.accessToken() == session.accessToken)
        server.clock.advance(by: 21)
        await #expect(throws: RemoteError.self) { try await auth.accessToken() }
        #expect(store.load() == session)
    }

    @Test("without a session there is no token")
    func notSignedIn() async throws {
        let auth = FakeAuthServer().makeClient()
        let error = await #expect(throws: AuthError.self) { try await auth.accessToken() }
        #expect(error?.code == .notSignedIn)
        #expect(error?.isSessionGone == true)
    }

    @Test("a refresh that finishes after a sign-out does not bring the session back")
    func signOutDuringRefresh() async throws {
        let server = FakeAuthServer()
        let store = InMemorySessionStore(server.issueSession())
        let auth = server.makeClient(store: store)
        let refreshStarted = Latch(count: 1), signedOut = Latch(count: 1)
        server.holdRefreshes {
            refreshStarted.arrive()
            await signedOut.wait()
        }
        server.fail(.logout, with: .network)
        let refreshing = Task { try await auth.refresh() }
        await refreshStarted.wait()
        try? await auth.signOut()
        signedOut.arrive()
        await #expect(throws: AuthError.self) { try await refreshing.value }
        #expect(store.load() == nil)
        #expect(try await auth.session == nil)
    }
}
